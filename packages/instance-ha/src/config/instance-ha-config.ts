import { ConfigError, type ConfigProblem, readYamlMapping, WHOLE_FILE_KEY } from '@lifeguard/runtime';
import { canonicalAddress } from '../kdump/address.ts';
import {
  type ConfigKey,
  INSTANCE_HA_KEYS,
  type InstanceHaKeyName,
  type InstanceHaLogLevel,
  LIFEGUARD_INTEGER_KEYS,
  LIFEGUARD_KEYS,
  LOG_LEVELS,
  PORT_KEYS,
  type PortKeyName,
  UNUSED_INSTANCE_HA_KEYS,
} from './config-keys.ts';
import {
  type Converted,
  describeRaw,
  TRUE_STRINGS,
  toBoolean,
  toInteger,
  toList,
  toPath,
  toText,
} from './values.ts';

/** Where InstanceHA (and lifeguard) read config.yaml when INSTANCEHA_CONFIG_PATH is not set. */
export const DEFAULT_CONFIG_PATH = '/var/lib/instanceha/config.yaml';

/**
 * InstanceHA's configuration, typed. Every field is named with its unit; the key it comes from is
 * given in brackets (docs/instance-ha-rules.md#configuration-keys gives meanings, defaults and ranges).
 */
export interface InstanceHaConfig {
  /** [POLL] Seconds between two polls of Nova's service list. 45, 15–600. */
  readonly pollSeconds: number;
  /** [DELTA] A service whose `updated_at` is older than this many seconds counts as failed. 30, 10–300. */
  readonly deltaSeconds: number;
  /** [THRESHOLD] Block fencing when impacted hosts are strictly more than this percentage. 50, 0–100. */
  readonly thresholdPercent: number;
  /** [MAX_HOSTS_PER_CYCLE] At most this many new failed hosts admitted per poll cycle. 10, 1–200. */
  readonly maxHostsPerCycle: number;
  /** [K8S_API_CHECK_INTERVAL] Seconds between control-plane reachability probes. 15, 5–120. */
  readonly k8sApiCheckIntervalSeconds: number;
  /** [WORKERS] Hosts processed concurrently. 4, 1–100. */
  readonly workers: number;
  /** [DELAY] Seconds to wait after fencing and disabling, before the first evacuate call. 0, 0–300. */
  readonly delaySeconds: number;
  /** [EVACUATION_MAX_THREADS] Concurrent evacuations in total; per host max(1, this ÷ workers). 32, 1–512. */
  readonly evacuationMaxThreads: number;
  /** [EVACUATION_RETRIES] Errors of one instance's evacuation that end it as failed. 5, 1–20. */
  readonly evacuationRetries: number;
  /** [EVACUATION_STAGGER] Seconds between submitting two evacuations of a phase. 0, 0–60. */
  readonly evacuationStaggerSeconds: number;
  /** [EVACUATION_TIMEOUT] Seconds one tracked instance evacuation may take. 300, 60–3600. */
  readonly evacuationTimeoutSeconds: number;
  /** [SMART_EVACUATION] Track each instance's evacuation migration to completion. */
  readonly smartEvacuation: boolean;
  /** [ORCHESTRATED_RESTART] Priority-ordered phases from server metadata (implies tracking). */
  readonly orchestratedRestart: boolean;
  /** [EVACUABLE_TAG] Tag / key name marking evacuable images, flavors and aggregates. `evacuable`. */
  readonly evacuableTag: string;
  /** [TAGGED_IMAGES] Consider image tags and properties. */
  readonly taggedImages: boolean;
  /** [TAGGED_FLAVORS] Consider flavor extra specs. */
  readonly taggedFlavors: boolean;
  /** [TAGGED_AGGREGATES] Only hosts in evacuable aggregates are handled (fail-closed). */
  readonly taggedAggregates: boolean;
  /** [SKIP_SERVERS_WITH_NAME] Case-sensitive fnmatch globs; matching servers are never evacuated. */
  readonly skipServersWithName: ReadonlyArray<string>;
  /** [RESERVED_HOSTS] Enable a spare host when one fails. */
  readonly reservedHosts: boolean;
  /** [FORCE_RESERVED_HOST_EVACUATION] Send the enabled spare as the evacuate `host`. */
  readonly forceReservedHostEvacuation: boolean;
  /** [LEAVE_DISABLED] Never re-enable evacuated hosts automatically. */
  readonly leaveDisabled: boolean;
  /** [FORCE_ENABLE] Skip the "evacuations still in progress" check before re-enabling. */
  readonly forceEnable: boolean;
  /** [CHECK_KDUMP] Listen for fence_kdump packets and wait for them before power fencing. */
  readonly checkKdump: boolean;
  /** [KDUMP_TIMEOUT] Seconds to wait for a first kdump packet before normal fencing. 30, 5–300. */
  readonly kdumpTimeoutSeconds: number;
  /** [CHECK_HEARTBEAT] Use the HBV2 heartbeat channel as a second failure signal. */
  readonly checkHeartbeat: boolean;
  /** [HEARTBEAT_TIMEOUT] A heartbeat older than this many seconds means silent. 120, 30–600. */
  readonly heartbeatTimeoutSeconds: number;
  /** [HEARTBEAT_CLIFF_THRESHOLD] Percentage drop of active heartbeats in one cycle = partition. 50, 10–100. */
  readonly heartbeatCliffThresholdPercent: number;
  /** [HEARTBEAT_CLIFF_MAX_CYCLES] Consecutive cliff cycles after which the loss is accepted. 3, 1–20. */
  readonly heartbeatCliffMaxCycles: number;
  /** [FENCING_TIMEOUT] Seconds per fencing request and power-off wait. 30, 5–120. */
  readonly fencingTimeoutSeconds: number;
  /** [SSL_VERIFY] Verify TLS certificates of Redfish BMCs. */
  readonly sslVerify: boolean;
  /** [DISABLED] No fencing and no evacuation (polling and re-enabling go on). */
  readonly disabled: boolean;
  /** [LOGLEVEL] DEBUG, INFO, WARNING, ERROR or CRITICAL. */
  readonly logLevel: InstanceHaLogLevel;
  /** LOGLEVEL as a pino level (WARNING → warn, CRITICAL → fatal). */
  readonly pinoLogLevel: (typeof LOG_LEVELS)[InstanceHaLogLevel];
  /** [HASH_INTERVAL] Seconds between refreshes of InstanceHA's liveness hash. 60, 30–300. */
  readonly hashIntervalSeconds: number;
  /** [SSL_CA_BUNDLE] CA bundle for Redfish, or null. */
  readonly sslCaBundle: string | null;
  /** [SSL_CERT_PATH] Client certificate for Redfish, or null. */
  readonly sslCertPath: string | null;
  /** [SSL_KEY_PATH] Client key for Redfish, or null. */
  readonly sslKeyPath: string | null;
  /** [UDP_PORT] UDP port of the fence_kdump listener. 7410. */
  readonly kdumpPort: number;
  /** [HEARTBEAT_PORT] UDP port of the heartbeat listener. 7411. */
  readonly heartbeatPort: number;
  /** [KDUMP_ADDRESS_MAP] fence_kdump source address (canonical form) → compute host. */
  readonly kdumpAddressMap: ReadonlyMap<string, string>;
  /**
   * [THRESHOLD_SUSPECT_AGE] Seconds of silence after which a service not yet failed counts as impacted
   * for THRESHOLD, `instanceha:max_failures` and the all-services-stale breaker. DELTA ÷ 2 unless set.
   */
  readonly thresholdSuspectAgeSeconds: number;
}

/** A value that could not be used as given (default or clamped value used instead). */
export interface ConfigWarning {
  readonly key: string;
  /** The file path or `environment`. */
  readonly source: string;
  readonly problem: string;
  readonly value: string | null;
}

export type ConfigValueSource = 'default' | 'file' | 'environment';

/** The result of loading: the configuration and everything worth one log line at start-up. */
export interface LoadedInstanceHaConfig {
  readonly config: InstanceHaConfig;
  /** The config.yaml path used. */
  readonly path: string;
  /** False when the file did not exist (defaults and environment only). */
  readonly fileFound: boolean;
  /** Values replaced by their default or clamped, and a missing file: log each once as a warning. */
  readonly warnings: ReadonlyArray<ConfigWarning>;
  /** Keys of the file's `config:` mapping that neither InstanceHA nor lifeguard knows: log once. */
  readonly unknownKeys: ReadonlyArray<string>;
  /** Keys InstanceHA ships but never reads (WATCHDOG_TIMEOUT), found in the file. */
  readonly unusedKeys: ReadonlyArray<string>;
  /** Where each key's value came from. */
  readonly sources: Readonly<Record<string, ConfigValueSource>>;
}

export interface LoadInstanceHaConfigOptions {
  /** config.yaml path; default env INSTANCEHA_CONFIG_PATH, else DEFAULT_CONFIG_PATH. */
  path?: string;
  /** Environment with overrides for every key (same names) and INSTANCEHA_DISABLED. */
  env?: NodeJS.ProcessEnv;
  /**
   * Keep integers below their minimum (down to 1, or 0 where 0 is allowed) instead of clamping them,
   * with a warning. For labs, tests and benchmarks only (e.g. POLL=5). Default: the environment's
   * LIFEGUARD_UNSAFE_SHORT_INTERVALS (true/1/yes/on/enabled), else false — so every worker reading the
   * same environment applies the same ranges.
   */
  allowBelowMinimum?: boolean;
}

function convert(raw: unknown, key: ConfigKey): Converted<unknown> {
  switch (key.kind) {
    case 'integer':
      return toInteger(raw, key);
    case 'boolean':
      return toBoolean(raw, key);
    case 'string':
      return toText(raw, key);
    case 'list':
      return toList(raw, key);
    case 'path':
      return toPath(raw, key);
  }
}

function parseAddressMap(raw: unknown, source: string): Map<string, string> {
  const map = new Map<string, string>();
  const problems: ConfigProblem[] = [];
  let entries: Array<[string, unknown]>;
  if (raw === null || raw === undefined || raw === '') return map;
  if (typeof raw === 'string') {
    entries = raw
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '')
      .map((item) => {
        const index = item.lastIndexOf('=');
        return index < 0 ? [item, undefined] : [item.slice(0, index).trim(), item.slice(index + 1).trim()];
      });
  } else if (typeof raw === 'object' && !Array.isArray(raw)) {
    entries = Object.entries(raw as Record<string, unknown>);
  } else {
    throw new ConfigError([
      {
        key: 'KDUMP_ADDRESS_MAP',
        source,
        problem: 'must be a mapping of address to host, or "address=host,address=host"',
        value: describeRaw(raw),
      },
    ]);
  }
  for (const [address, host] of entries) {
    const canonical = canonicalAddress(address);
    if (canonical === null) {
      problems.push({
        key: `KDUMP_ADDRESS_MAP.${address}`,
        source,
        problem: 'not an IP address',
        value: null,
      });
    } else if (typeof host !== 'string' || host.trim() === '') {
      problems.push({
        key: `KDUMP_ADDRESS_MAP.${address}`,
        source,
        problem: 'the host must be a non-empty string',
        value: describeRaw(host),
      });
    } else {
      map.set(canonical, host.trim());
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return map;
}

/**
 * LIFEGUARD_UNSAFE_SHORT_INTERVALS from the environment: true/1/yes/on/enabled or false/0/no/off/disabled.
 * @throws ConfigError naming the variable for any other value
 */
function shortIntervalsAllowed(env: NodeJS.ProcessEnv): boolean {
  const raw = (env.LIFEGUARD_UNSAFE_SHORT_INTERVALS ?? '').trim().toLowerCase();
  if (TRUE_STRINGS.includes(raw)) return true;
  if (['', 'false', '0', 'no', 'off', 'disabled'].includes(raw)) return false;
  throw new ConfigError([
    {
      key: 'LIFEGUARD_UNSAFE_SHORT_INTERVALS',
      source: 'environment',
      problem: 'must be true or false',
      value: JSON.stringify(env.LIFEGUARD_UNSAFE_SHORT_INTERVALS),
    },
  ]);
}

/**
 * Loads InstanceHA's config.yaml unchanged (a top-level `config:` mapping; all values may be strings)
 * and applies environment overrides, with InstanceHA's rules (docs/instance-ha-rules.md#environment to #configuration-keys):
 * integers as Python's `int()` (unparsable → default with a warning, out of range → clamped with a
 * warning); booleans true/1/yes/on/enabled; lists as YAML lists or comma strings; unknown keys
 * accepted and reported; a missing file → defaults with a warning. Every key can be overridden by an
 * environment variable of the same name (an empty variable counts as unset). INSTANCEHA_DISABLED set to
 * exactly `True` forces DISABLED on; any other value keeps the configured DISABLED.
 *
 * @throws ConfigError naming the key and the file for: a file that is not valid YAML, a top level or
 *   `config:` that is not a mapping, an unreadable file, a LOGLEVEL other than
 *   DEBUG/INFO/WARNING/ERROR/CRITICAL, an invalid KDUMP_ADDRESS_MAP
 */
export function loadInstanceHaConfig(options: LoadInstanceHaConfigOptions = {}): LoadedInstanceHaConfig {
  const env = options.env ?? process.env;
  const allowBelowMinimum = options.allowBelowMinimum ?? shortIntervalsAllowed(env);
  const path = options.path ?? (env.INSTANCEHA_CONFIG_PATH || DEFAULT_CONFIG_PATH);
  const warnings: ConfigWarning[] = [];
  const document = readYamlMapping(path, { required: false, pointedBy: 'INSTANCEHA_CONFIG_PATH' });
  let fileValues: Record<string, unknown> = {};
  if (document === null) {
    warnings.push({
      key: WHOLE_FILE_KEY,
      source: path,
      problem: 'configuration file not found; using defaults and the environment',
      value: null,
    });
  } else if (document.config !== undefined && document.config !== null) {
    if (typeof document.config !== 'object' || Array.isArray(document.config)) {
      throw new ConfigError([
        { key: 'config', source: path, problem: 'must be a mapping of keys to values', value: null },
      ]);
    }
    fileValues = document.config as Record<string, unknown>;
  } else {
    warnings.push({
      key: 'config',
      source: path,
      problem: 'the file has no "config:" mapping; using defaults and the environment',
      value: null,
    });
  }

  const allKeys: Record<string, ConfigKey> = { ...INSTANCE_HA_KEYS, ...PORT_KEYS, ...LIFEGUARD_INTEGER_KEYS };
  const known = new Set([...Object.keys(allKeys), ...LIFEGUARD_KEYS]);
  const unknownKeys = Object.keys(fileValues).filter(
    (key) => !known.has(key) && !UNUSED_INSTANCE_HA_KEYS.includes(key),
  );
  const unusedKeys = Object.keys(fileValues).filter((key) => UNUSED_INSTANCE_HA_KEYS.includes(key));

  const values: Record<string, unknown> = {};
  const sources: Record<string, ConfigValueSource> = {};
  const pick = (name: string): { raw: unknown; source: string; origin: ConfigValueSource } | null => {
    const fromEnv = env[name];
    if (fromEnv !== undefined && fromEnv !== '')
      return { raw: fromEnv, source: 'environment', origin: 'environment' };
    if (fileValues[name] !== undefined) return { raw: fileValues[name], source: path, origin: 'file' };
    return null;
  };

  for (const [name, key] of Object.entries(allKeys)) {
    values[name] = key.default;
    sources[name] = 'default';
    const given = pick(name);
    if (given === null) continue;
    if (name === 'LOGLEVEL') {
      const level = String(given.raw).trim().toUpperCase();
      if (!(level in LOG_LEVELS)) {
        throw new ConfigError([
          {
            key: 'LOGLEVEL',
            source: given.source,
            problem: `must be one of ${Object.keys(LOG_LEVELS).join(', ')}`,
            value: describeRaw(given.raw),
          },
        ]);
      }
      values[name] = level;
      sources[name] = given.origin;
      continue;
    }
    const converted = convert(given.raw, key);
    if (!converted.ok) {
      warnings.push({
        key: name,
        source: given.source,
        problem: `${converted.problem}; using the default ${JSON.stringify(key.default)}`,
        value: describeRaw(given.raw),
      });
      continue;
    }
    if (converted.clampedFrom !== undefined && key.kind === 'integer') {
      const inPorts = name in PORT_KEYS;
      const floor = Math.min(key.minimum, 1);
      if (
        allowBelowMinimum &&
        !inPorts &&
        converted.clampedFrom < key.minimum &&
        converted.clampedFrom >= floor
      ) {
        warnings.push({
          key: name,
          source: given.source,
          problem: `below InstanceHA's minimum ${key.minimum} ${key.unit}; kept because short intervals are allowed`,
          value: describeRaw(given.raw),
        });
        values[name] = converted.clampedFrom;
        sources[name] = given.origin;
        continue;
      }
      warnings.push({
        key: name,
        source: given.source,
        problem: inPorts
          ? `out of range ${key.minimum}–${key.maximum}; using the default ${key.default}`
          : `out of range ${key.minimum}–${key.maximum} ${key.unit}; clamped to ${String(converted.value)}`,
        value: describeRaw(given.raw),
      });
      // InstanceHA falls back to the default for out-of-range ports and clamps everything else.
      values[name] = inPorts ? key.default : converted.value;
      sources[name] = inPorts ? 'default' : given.origin;
      continue;
    }
    if (converted.unrecognised) {
      warnings.push({
        key: name,
        source: given.source,
        problem: `not one of true/1/yes/on/enabled or false/0/no/off/disabled; read as false (as InstanceHA reads it)`,
        value: describeRaw(given.raw),
      });
    }
    values[name] = converted.value;
    sources[name] = given.origin;
  }

  if (env.INSTANCEHA_DISABLED === 'True') {
    values.DISABLED = true;
    sources.DISABLED = 'environment';
  }

  const addressMapGiven = pick('KDUMP_ADDRESS_MAP');
  const kdumpAddressMap = addressMapGiven
    ? parseAddressMap(addressMapGiven.raw, addressMapGiven.source)
    : new Map<string, string>();
  sources.KDUMP_ADDRESS_MAP = addressMapGiven?.origin ?? 'default';

  const number = (name: InstanceHaKeyName | PortKeyName | keyof typeof LIFEGUARD_INTEGER_KEYS) =>
    values[name] as number;
  const flag = (name: InstanceHaKeyName) => values[name] as boolean;
  const logLevel = values.LOGLEVEL as InstanceHaLogLevel;
  const config: InstanceHaConfig = {
    pollSeconds: number('POLL'),
    deltaSeconds: number('DELTA'),
    thresholdPercent: number('THRESHOLD'),
    maxHostsPerCycle: number('MAX_HOSTS_PER_CYCLE'),
    k8sApiCheckIntervalSeconds: number('K8S_API_CHECK_INTERVAL'),
    workers: number('WORKERS'),
    delaySeconds: number('DELAY'),
    evacuationMaxThreads: number('EVACUATION_MAX_THREADS'),
    evacuationRetries: number('EVACUATION_RETRIES'),
    evacuationStaggerSeconds: number('EVACUATION_STAGGER'),
    evacuationTimeoutSeconds: number('EVACUATION_TIMEOUT'),
    smartEvacuation: flag('SMART_EVACUATION'),
    orchestratedRestart: flag('ORCHESTRATED_RESTART'),
    evacuableTag: values.EVACUABLE_TAG as string,
    taggedImages: flag('TAGGED_IMAGES'),
    taggedFlavors: flag('TAGGED_FLAVORS'),
    taggedAggregates: flag('TAGGED_AGGREGATES'),
    skipServersWithName: values.SKIP_SERVERS_WITH_NAME as string[],
    reservedHosts: flag('RESERVED_HOSTS'),
    forceReservedHostEvacuation: flag('FORCE_RESERVED_HOST_EVACUATION'),
    leaveDisabled: flag('LEAVE_DISABLED'),
    forceEnable: flag('FORCE_ENABLE'),
    checkKdump: flag('CHECK_KDUMP'),
    kdumpTimeoutSeconds: number('KDUMP_TIMEOUT'),
    checkHeartbeat: flag('CHECK_HEARTBEAT'),
    heartbeatTimeoutSeconds: number('HEARTBEAT_TIMEOUT'),
    heartbeatCliffThresholdPercent: number('HEARTBEAT_CLIFF_THRESHOLD'),
    heartbeatCliffMaxCycles: number('HEARTBEAT_CLIFF_MAX_CYCLES'),
    fencingTimeoutSeconds: number('FENCING_TIMEOUT'),
    sslVerify: flag('SSL_VERIFY'),
    disabled: flag('DISABLED'),
    logLevel,
    pinoLogLevel: LOG_LEVELS[logLevel],
    hashIntervalSeconds: number('HASH_INTERVAL'),
    sslCaBundle: values.SSL_CA_BUNDLE as string | null,
    sslCertPath: values.SSL_CERT_PATH as string | null,
    sslKeyPath: values.SSL_KEY_PATH as string | null,
    kdumpPort: number('UDP_PORT'),
    heartbeatPort: number('HEARTBEAT_PORT'),
    kdumpAddressMap,
    thresholdSuspectAgeSeconds:
      number('THRESHOLD_SUSPECT_AGE') > 0
        ? number('THRESHOLD_SUSPECT_AGE')
        : Math.max(1, number('DELTA') / 2),
  };
  return {
    config,
    path,
    fileFound: document !== null,
    warnings,
    unknownKeys,
    unusedKeys,
    sources,
  };
}
