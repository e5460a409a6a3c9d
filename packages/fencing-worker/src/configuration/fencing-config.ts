import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { shortHostname } from '@lifeguard/instance-ha';
import {
  ConfigError,
  type ConfigProblem,
  isSecretKey,
  issueProblem,
  readYamlMapping,
  valueAtPath,
} from '@lifeguard/runtime';
import type { z } from 'zod';
import {
  type FenceAgentMethod,
  type FenceMethod,
  type HostFencing,
  IPMI_FENCE_AGENTS,
  type IpmiMethod,
  methodPassword,
  type NoopMethod,
  REDFISH_FENCE_AGENTS,
  REFUSED_FENCE_AGENTS,
  type RedfishMethod,
  type TlsSettings,
} from './fence-methods.ts';
import { fenceAgentSchema, ipmiSchema, noopSchema, redfishSchema } from './method-schemas.ts';

/** Settings that shape how fencing.yaml is read. */
export interface FencingConfigOptions {
  /** FENCING_TIMEOUT (config.yaml, seconds): a method's timeout when its entry has none. */
  defaultTimeoutSeconds: number;
  /** LIFEGUARD_FENCING_ALLOW_LOOPBACK: accept BMCs on 127.0.0.0/8 and ::1 (test beds, simulated cloud). */
  allowLoopback: boolean;
  /** LIFEGUARD_FENCING_ALLOW_NOOP: accept `agent: noop` (reports success without fencing). */
  allowNoop: boolean;
  /** SSL_VERIFY / SSL_CA_BUNDLE / SSL_CERT_PATH / SSL_KEY_PATH (config.yaml) for Redfish. */
  tls: TlsSettings;
  /** Where fence agents live (LIFEGUARD_FENCE_AGENTS_DIRECTORY, default /usr/sbin). */
  fenceAgentsDirectory: string;
}

/** The validated fencing.yaml. */
export class FencingConfiguration {
  constructor(readonly hosts: ReadonlyArray<HostFencing>) {}

  /**
   * The entry for a Nova service host: the first entry in file order whose key has the same short
   * hostname (text before the first dot), as InstanceHA HEAD matches (docs/instance-ha-rules.md#configuration-files) — so
   * `compute-1` never matches `compute-10`. Null when no entry matches.
   */
  find(host: string): HostFencing | null {
    const wanted = shortHostname(host);
    return this.hosts.find((entry) => entry.shortName === wanted) ?? null;
  }

  /** Every password in the file, for scrubbing program output and error messages. */
  secrets(): string[] {
    return this.hosts.flatMap((host) =>
      host.methods.map(methodPassword).filter((value): value is string => value !== null),
    );
  }
}

const describeValue = (key: string, value: unknown): string | null => {
  if (value === undefined) return null;
  if (isSecretKey(key)) return '[REDACTED]';
  return JSON.stringify(value);
};

function problemsOf(
  error: z.ZodError,
  prefix: string,
  raw: Record<string, unknown>,
  source: string,
): ConfigProblem[] {
  return error.issues.map((issue) => {
    const field = String(issue.path[0] ?? '');
    const key = [prefix, ...issue.path.map(String)].join('.');
    // Values are shown only for top-level fields: a nested one (an `options` entry) may hold a secret.
    const value =
      issue.code === 'unrecognized_keys' || issue.path.length > 1 ? null : describeValue(field, raw[field]);
    const problem =
      issue.code === 'unrecognized_keys'
        ? `unknown key(s) ${issue.keys.join(', ')}`
        : issueProblem(issue, valueAtPath(raw, issue.path));
    return { key, source, problem, value };
  });
}

/** Fence agents that are not installed, by program: the first key naming it, its path, the hosts using it. */
type MissingAgents = Map<string, { key: string; path: string; hosts: string[] }>;

/** Notes that `host` uses a fence agent that is not installed (reported once per program). */
function noteMissingAgent(
  missing: MissingAgents,
  agent: string,
  path: string,
  key: string,
  host: string,
): null {
  const seen = missing.get(agent) ?? { key, path, hosts: [] };
  if (!seen.hosts.includes(host)) seen.hosts.push(host);
  missing.set(agent, seen);
  return null;
}

/** One problem per missing fence agent, under the first key that names it, listing every host using it. */
function missingAgentProblems(missing: MissingAgents, source: string): ConfigProblem[] {
  return [...missing].map(([agent, { key, path, hosts }]) => ({
    key,
    source,
    problem:
      `${path} is not installed or not executable (install fence-agents); ` +
      `used by ${hosts.length === 1 ? '1 host' : `${hosts.length} hosts`}: ${hosts.join(', ')}`,
    value: `"${agent}"`,
  }));
}

/** One method entry being validated: its fields, its agent, and where its problems go. */
interface MethodEntry {
  readonly entry: Record<string, unknown>;
  /** The `agent` value, trimmed and lower-cased. */
  readonly agent: string;
  /** The fields every method has: its position and name. */
  readonly base: { index: number; name: string };
  readonly prefix: string;
  readonly options: FencingConfigOptions;
  /** The host key of the entry, and where a missing fence agent is noted (not reported per host). */
  readonly intake: { host: string; missingAgents: MissingAgents };
  /** Appends a problem under `<prefix>.<key>`; returns null. */
  fail(key: string, problem: string, value?: string | null): null;
  /** The entry as the schema reads it, or null with the schema's problems appended. */
  parse<Schema extends z.ZodType>(schema: Schema): z.output<Schema> | null;
  /** The entry's `timeout` (seconds), else FENCING_TIMEOUT. */
  timeout(value: number | undefined): number;
}

/**
 * Validates one method entry (InstanceHA's single-agent entry, or one item of `methods`).
 * @returns the method, or null with the problems appended to `problems`
 */
function parseMethod(
  raw: unknown,
  index: number,
  prefix: string,
  options: FencingConfigOptions,
  source: string,
  problems: ConfigProblem[],
  /** The host key of the entry, and where a missing fence agent is noted (not reported per host). */
  intake: { host: string; missingAgents: MissingAgents },
): FenceMethod | null {
  const fail = (key: string, problem: string, value: string | null = null) => {
    problems.push({ key: `${prefix}.${key}`, source, problem, value });
    return null;
  };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return fail('agent', 'must be a mapping');
  const entry = raw as Record<string, unknown>;
  if (typeof entry.agent !== 'string' || entry.agent.trim() === '') {
    return fail('agent', 'is required: ipmi, redfish, noop or fence_<name>');
  }
  const agent = entry.agent.trim().toLowerCase();
  const method: MethodEntry = {
    entry,
    agent,
    base: { index, name: agent },
    prefix,
    options,
    intake,
    fail,
    parse: (schema) => {
      const result = schema.safeParse(entry);
      if (result.success) return result.data;
      problems.push(...problemsOf(result.error, prefix, entry, source));
      return null;
    },
    timeout: (value) => value ?? options.defaultTimeoutSeconds,
  };
  if (agent === 'ipmi') return parseIpmiMethod(method);
  if (agent === 'redfish') return parseRedfishMethod(method);
  if (agent === 'noop') return parseNoopMethod(method);
  return parseFenceAgentMethod(method);
}

/** `agent: ipmi`: lifeguard's own IPMI client (ipmiSchema). */
function parseIpmiMethod(method: MethodEntry): IpmiMethod | null {
  const value = method.parse(ipmiSchema({ allowLoopback: method.options.allowLoopback }));
  if (!value) return null;
  return {
    ...method.base,
    kind: 'ipmi',
    address: value.ipaddr,
    port: value.ipport,
    login: value.login,
    password: value.passwd,
    cipherSuite: value.cipher ?? null,
    expectedGuid: value.expected_guid ?? null,
    timeoutSeconds: method.timeout(value.timeout),
  };
}

/** `agent: redfish`: lifeguard's own Redfish client (redfishSchema), TLS settings over config.yaml's. */
function parseRedfishMethod(method: MethodEntry): RedfishMethod | null {
  const { options } = method;
  const value = method.parse(redfishSchema({ allowLoopback: options.allowLoopback }));
  if (!value) return null;
  return {
    ...method.base,
    kind: 'redfish',
    address: value.ipaddr,
    port: value.ipport,
    login: value.login,
    password: value.passwd,
    systemId: value.uuid,
    useTls: value.tls,
    tlsSettings: {
      ...options.tls,
      ...(value.ssl_verify === undefined ? {} : { verify: value.ssl_verify }),
      ...(value.ca_bundle === undefined ? {} : { caBundlePath: value.ca_bundle }),
    },
    expectedSystemUuid: value.expected_system_uuid ?? null,
    timeoutSeconds: method.timeout(value.timeout),
  };
}

/** `agent: noop`: refused unless LIFEGUARD_FENCING_ALLOW_NOOP=true (it reports success without fencing). */
function parseNoopMethod(method: MethodEntry): NoopMethod | null {
  if (!method.options.allowNoop) {
    return method.fail(
      'agent',
      'noop reports success without fencing; it is refused unless LIFEGUARD_FENCING_ALLOW_NOOP=true',
      '"noop"',
    );
  }
  const value = method.parse(noopSchema);
  if (!value) return null;
  return { ...method.base, kind: 'noop', timeoutSeconds: method.timeout(value.timeout) };
}

/**
 * `agent: fence_<name>`: an installed fence agent that cuts power (not `bmh`, not a refused agent);
 * `expected_guid` only for IPMI agents, `expected_system_uuid` only for Redfish agents, and either
 * needs ipaddr, login and passwd. A fence agent that is not installed is noted in `intake.missingAgents`.
 */
function parseFenceAgentMethod(method: MethodEntry): FenceAgentMethod | null {
  const { agent, fail, options, prefix, intake } = method;
  if (agent === 'bmh') {
    return fail('agent', 'the Metal3 BareMetalHost agent is not supported; use a fence agent', '"bmh"');
  }
  if (!/^fence_[a-z0-9_]+$/.test(agent)) {
    return fail(
      'agent',
      'must be ipmi, redfish, noop or the name of a fence agent (fence_<name>)',
      `"${agent}"`,
    );
  }
  if (REFUSED_FENCE_AGENTS.has(agent)) {
    return fail('agent', `${agent} does not cut power, so it cannot prove a host is fenced`, `"${agent}"`);
  }
  const path = join(options.fenceAgentsDirectory, agent);
  try {
    accessSync(path, constants.X_OK);
  } catch {
    return noteMissingAgent(intake.missingAgents, agent, path, `${prefix}.agent`, intake.host);
  }
  const value = method.parse(fenceAgentSchema({ allowLoopback: options.allowLoopback }));
  if (!value) return null;
  if (value.expected_guid !== undefined && !IPMI_FENCE_AGENTS.has(agent)) {
    return fail('expected_guid', `is only checked for IPMI agents (${[...IPMI_FENCE_AGENTS].join(', ')})`);
  }
  if (value.expected_system_uuid !== undefined && !REDFISH_FENCE_AGENTS.has(agent)) {
    return fail(
      'expected_system_uuid',
      `is only checked for Redfish agents (${[...REDFISH_FENCE_AGENTS].join(', ')})`,
    );
  }
  if (
    (value.expected_guid ?? value.expected_system_uuid) !== undefined &&
    (!value.ipaddr || !value.login || !value.passwd)
  ) {
    return fail('ipaddr', 'checking the BMC identity needs ipaddr, login and passwd');
  }
  return {
    ...method.base,
    kind: 'fence-agent',
    program: agent,
    path,
    address: value.ipaddr ?? null,
    port: value.ipport ?? null,
    login: value.login ?? null,
    password: value.passwd ?? null,
    plug: value.plug ?? null,
    options: value.options,
    expectedGuid: value.expected_guid ?? null,
    expectedSystemUuid: value.expected_system_uuid ?? null,
    tlsSettings: {
      ...options.tls,
      ...(value.options.ssl_insecure === '1' ? { verify: false } : {}),
      ...(value.ssl_verify === undefined ? {} : { verify: value.ssl_verify }),
      ...(value.ca_bundle === undefined ? {} : { caBundlePath: value.ca_bundle }),
    },
    timeoutSeconds: method.timeout(value.timeout),
  };
}

/**
 * Validates a fencing.yaml document: InstanceHA's `FencingConfig:` mapping of host keys to one
 * agent entry each (docs/instance-ha-rules.md#configuration-files), plus lifeguard's topology form, `methods:` — a list of entries
 * tried in order until one confirms the power off.
 * @param source the file path, named in errors
 * @throws ConfigError naming every invalid key as `FencingConfig.<host>[.methods.<n>].<key>`,
 *   passwords masked
 */
export function parseFencingConfig(
  document: Record<string, unknown>,
  source: string,
  options: FencingConfigOptions,
): FencingConfiguration {
  const problems: ConfigProblem[] = [];
  const root = document.FencingConfig;
  if (root === undefined || root === null) {
    if (Object.keys(document).length === 0) return new FencingConfiguration([]);
    throw new ConfigError([
      {
        key: 'FencingConfig',
        source,
        problem: 'is required (the top-level mapping of host entries)',
        value: null,
      },
    ]);
  }
  if (typeof root !== 'object' || Array.isArray(root)) {
    throw new ConfigError([
      { key: 'FencingConfig', source, problem: 'must be a mapping of host entries', value: null },
    ]);
  }
  const hosts: HostFencing[] = [];
  const missingAgents: MissingAgents = new Map();
  for (const [key, raw] of Object.entries(root as Record<string, unknown>)) {
    const intake = { host: key, missingAgents };
    const prefix = `FencingConfig.${key}`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      problems.push({ key: prefix, source, problem: 'must be a mapping', value: null });
      continue;
    }
    const entry = raw as Record<string, unknown>;
    let methods: Array<FenceMethod | null>;
    if ('methods' in entry) {
      const extra = Object.keys(entry).filter((name) => name !== 'methods');
      if (extra.length > 0) {
        problems.push({
          key: prefix,
          source,
          problem: `an entry with methods may have no other keys; found ${extra.join(', ')}`,
          value: null,
        });
        continue;
      }
      if (!Array.isArray(entry.methods) || entry.methods.length === 0) {
        problems.push({ key: `${prefix}.methods`, source, problem: 'must be a non-empty list', value: null });
        continue;
      }
      methods = entry.methods.map((item, index) =>
        parseMethod(item, index, `${prefix}.methods.${index}`, options, source, problems, intake),
      );
    } else {
      methods = [parseMethod(entry, 0, prefix, options, source, problems, intake)];
    }
    if (methods.every((method): method is FenceMethod => method !== null)) {
      hosts.push({ key, shortName: shortHostname(key), methods });
    }
  }
  problems.push(...missingAgentProblems(missingAgents, source));
  if (problems.length > 0) throw new ConfigError(problems);
  return new FencingConfiguration(hosts);
}

/**
 * Reads and validates fencing.yaml (FENCING_CONFIG_PATH).
 * @throws ConfigError when the file is missing, unreadable, not YAML or invalid (a problem with the
 *   whole file is reported under FENCING_CONFIG_PATH, with the path)
 */
export function loadFencingConfig(path: string, options: FencingConfigOptions): FencingConfiguration {
  const document = readYamlMapping(path, { required: true, pointedBy: 'FENCING_CONFIG_PATH' }) ?? {};
  return parseFencingConfig(document, path, options);
}
