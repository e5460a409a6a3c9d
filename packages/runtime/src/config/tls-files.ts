import { accessSync, constants, readFileSync } from 'node:fs';
import { ConfigError } from '../errors.ts';

/** The broker a set of TLS files is for. */
export type TlsBroker = 'amqp' | 'redis';

/** TLS material read from files (PEM), as `tls.connect` takes it. */
export interface TlsFiles {
  /** Certificate authorities that sign the server certificate (replaces Node's bundled ones). */
  ca?: Buffer;
  /** Client certificate, for a server that asks for one (RabbitMQ `verify_peer`, Redis `tls-auth-clients`). */
  cert?: Buffer;
  /** Private key of the client certificate. */
  key?: Buffer;
}

/** The configuration keys of each broker's TLS files. */
export const TLS_FILE_KEYS = {
  amqp: {
    url: 'LIFEGUARD_AMQP_URL',
    scheme: 'amqps:',
    ca: 'LIFEGUARD_AMQP_TLS_CA_FILE',
    cert: 'LIFEGUARD_AMQP_TLS_CERT_FILE',
    key: 'LIFEGUARD_AMQP_TLS_KEY_FILE',
  },
  redis: {
    url: 'LIFEGUARD_REDIS_URL',
    scheme: 'rediss:',
    ca: 'LIFEGUARD_REDIS_TLS_CA_FILE',
    cert: 'LIFEGUARD_REDIS_TLS_CERT_FILE',
    key: 'LIFEGUARD_REDIS_TLS_KEY_FILE',
  },
} as const;

/** Why a TLS file setting cannot be used, or null. */
export function tlsFileProblem(path: string): string | null {
  try {
    accessSync(path, constants.R_OK);
    return null;
  } catch (error) {
    return `cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`;
  }
}

/**
 * The problems of one broker's TLS settings taken together: a client certificate without its key
 * (or the reverse), and TLS files with a URL that does not ask for TLS (`amqp://`, `redis://`).
 * @returns `[key, problem]` pairs, empty when the settings fit together
 */
export function tlsPairingProblems(
  broker: TlsBroker,
  values: Readonly<Record<string, string | undefined>>,
): Array<[string, string]> {
  const keys = TLS_FILE_KEYS[broker];
  const problems: Array<[string, string]> = [];
  if (values[keys.cert] && !values[keys.key])
    problems.push([keys.key, `is required with ${keys.cert} (the client certificate's private key)`]);
  if (values[keys.key] && !values[keys.cert])
    problems.push([keys.cert, `is required with ${keys.key} (the client certificate)`]);
  const given = [keys.ca, keys.cert, keys.key].filter((key) => values[key]);
  const url = values[keys.url];
  if (given.length > 0 && url !== undefined && !url.startsWith(`${keys.scheme}//`))
    for (const key of given)
      problems.push([key, `is set but ${keys.url} is not a ${keys.scheme}// URL, so TLS is not used`]);
  return problems;
}

/**
 * Reads one broker's TLS files named by the configuration (TLS_FILE_KEYS), after checking that the
 * settings fit together (tlsPairingProblems).
 * @param values the configuration (RuntimeConfig, or the environment)
 * @returns the material, or undefined when none of the three keys is set
 * @throws ConfigError naming each key of a mismatched setting, or of a file that cannot be read
 */
export function readTlsFiles(broker: TlsBroker, values: object): TlsFiles | undefined {
  const settings = values as Readonly<Record<string, string | undefined>>;
  const keys = TLS_FILE_KEYS[broker];
  const mismatched = tlsPairingProblems(broker, settings);
  if (mismatched.length > 0) {
    throw new ConfigError(
      mismatched.map(([key, problem]) => ({
        key,
        source: 'environment',
        problem,
        value: settings[key] === undefined ? null : JSON.stringify(settings[key]),
      })),
    );
  }
  const files: TlsFiles = {};
  for (const part of ['ca', 'cert', 'key'] as const) {
    const path = settings[keys[part]];
    if (!path) continue;
    try {
      files[part] = readFileSync(path);
    } catch (error) {
      throw new ConfigError([
        {
          key: keys[part],
          source: 'environment',
          problem: `cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
          value: JSON.stringify(path),
        },
      ]);
    }
  }
  return Object.keys(files).length > 0 ? files : undefined;
}
