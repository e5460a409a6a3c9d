import { standardOutput } from '@lifeguard/contracts';
import { type DestinationStream, type Logger, pino } from 'pino';

export type { Logger } from 'pino';

/**
 * Paths pino masks in every log line: passwords, tokens, secrets and Authorization headers at any
 * depth up to three levels (pino redaction needs explicit wildcards per level).
 */
export const REDACTED_PATHS: ReadonlyArray<string> = (() => {
  const fields = [
    'password',
    'passwd',
    'secret',
    'token',
    'authToken',
    'auth_token',
    'applicationCredentialSecret',
    'application_credential_secret',
    'hmacKey',
    '"X-Auth-Token"',
    '"x-auth-token"',
    '"X-Subject-Token"',
    '"x-subject-token"',
    'authorization',
    'Authorization',
  ];
  const paths: string[] = [];
  for (const field of fields) {
    paths.push(field, `*.${field}`, `*.*.${field}`, `*.*.*.${field}`);
  }
  paths.push('headers.authorization', 'req.headers.authorization', 'amqpUrl', 'redisUrl');
  return paths;
})();

export interface LoggerOptions {
  /** The service name put on every line (`service` field). */
  service: string;
  level?: string;
  /** The process instance name (`instance` field). */
  instance?: string;
  /** Human-readable output through pino-pretty (development only). */
  pretty?: boolean;
  /** Where lines go (tests capture them); stdout when absent. */
  destination?: DestinationStream;
}

/**
 * A pino logger with lifeguard's redaction: values at `REDACTED_PATHS` become `[REDACTED]`, and
 * error objects are serialised with their stack under `err`.
 */
export function createLogger(options: LoggerOptions): Logger {
  const base = { service: options.service, ...(options.instance ? { instance: options.instance } : {}) };
  const settings = {
    level: options.level ?? 'info',
    base,
    redact: { paths: [...REDACTED_PATHS], censor: '[REDACTED]' },
    serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  if (options.destination) return pino(settings, options.destination);
  if (options.pretty)
    return pino({ ...settings, transport: { target: 'pino-pretty', options: { colorize: true } } });
  return pino(settings, standardOutput());
}
