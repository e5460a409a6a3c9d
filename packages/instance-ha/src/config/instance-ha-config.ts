import { ConfigError, readYamlMapping, WHOLE_FILE_KEY } from '@lifeguard/runtime';
import { parseMetadataMatch } from '../evacuable/server-exclusions.ts';
import { parseAddressMap } from './address-map.ts';
import {
  type ConfigKey,
  LIFEGUARD_KEYS,
  PORT_KEYS,
  TABLE_KEYS,
  type TableFields,
  UNUSED_INSTANCE_HA_KEYS,
} from './config-keys.ts';
import { likelyMeant, misspelledKeyWarnings } from './key-suggestions.ts';
import {
  type ConfigValueSource,
  type ConfigWarning,
  type GivenValue,
  type KeyReading,
  readKey,
} from './read-key.ts';
import { LOG_LEVELS, TRUE_STRINGS } from './values.ts';

export type { ConfigValueSource, ConfigWarning } from './read-key.ts';

/** Where InstanceHA (and lifeguard) read config.yaml when INSTANCEHA_CONFIG_PATH is not set. */
export const DEFAULT_CONFIG_PATH = '/var/lib/instanceha/config.yaml';

/**
 * InstanceHA's configuration, typed: one field per key of the table in config-keys.ts (INSTANCE_HA_KEYS,
 * PORT_KEYS, LIFEGUARD_INTEGER_KEYS, LIFEGUARD_BOOLEAN_KEYS, LIFEGUARD_LIST_KEYS: the field name carries the unit, the type is the output of the
 * key's zod schema; docs/instance-ha-rules.md#configuration-keys gives meanings, defaults and ranges),
 * plus what is derived from them. `thresholdSuspectAgeSeconds` [THRESHOLD_SUSPECT_AGE] is DELTA ÷ 2
 * unless set; `massEventHoldDownSeconds` [MASS_EVENT_HOLD_DOWN] is 2 × DELTA unless set; `disabled` [DISABLED] is forced on by INSTANCEHA_DISABLED=True.
 */
export type InstanceHaConfig = TableFields & {
  /** LOGLEVEL as a pino level (WARNING → warn, CRITICAL → fatal). */
  readonly pinoLogLevel: (typeof LOG_LEVELS)[keyof typeof LOG_LEVELS];
  /** [KDUMP_ADDRESS_MAP] fence_kdump source address (canonical form) → compute host. */
  readonly kdumpAddressMap: ReadonlyMap<string, string>;
};

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

/** The file's `config:` mapping (empty when there is none, with the warning to report). */
function configMapping(path: string): {
  values: Record<string, unknown>;
  found: boolean;
  warning: ConfigWarning | null;
} {
  const document = readYamlMapping(path, { required: false, pointedBy: 'INSTANCEHA_CONFIG_PATH' });
  if (document === null) {
    const problem = 'configuration file not found; using defaults and the environment';
    return { values: {}, found: false, warning: { key: WHOLE_FILE_KEY, source: path, problem, value: null } };
  }
  if (document.config === undefined) {
    // Settings beside a missing `config:` (a misspelt `confg:`, or keys at the top level) would all
    // be ignored, every safety setting at its default: refused, naming them.
    const strays = Object.keys(document).sort();
    if (strays.length > 0) {
      const meant = strays.find((key) => likelyMeant(key, ['config']) !== null);
      throw new ConfigError([
        {
          key: meant ?? strays[0]!,
          source: path,
          problem:
            meant !== undefined
              ? `not a top-level key InstanceHA or lifeguard reads: did you mean config? The file has no "config:" mapping, so none of its settings would be used`
              : `the file has no "config:" mapping, so its top-level keys (${strays.join(', ')}) would not be used; put the settings under "config:"`,
          value: null,
        },
      ]);
    }
  }
  // A setting beside `config:` (`DISABLED: true` appended at the end of the file) would be ignored
  // without a word, the setting left as it was: refused, naming it.
  const beside = Object.keys(document)
    .filter((key) => key !== 'config')
    .sort();
  if (beside.length > 0) {
    throw new ConfigError([
      {
        key: beside[0]!,
        source: path,
        problem: `a top-level key beside "config:" (${beside.join(', ')}): only the keys under "config:" are read, so it would not be used; move it under "config:"`,
        value: null,
      },
    ]);
  }
  if (document.config === undefined || document.config === null) {
    const problem = 'the file has no "config:" mapping; using defaults and the environment';
    return { values: {}, found: true, warning: { key: 'config', source: path, problem, value: null } };
  }
  if (typeof document.config !== 'object' || Array.isArray(document.config)) {
    throw new ConfigError([
      { key: 'config', source: path, problem: 'must be a mapping of keys to values', value: null },
    ]);
  }
  return { values: document.config as Record<string, unknown>, found: true, warning: null };
}

/**
 * Every key of the table read with readKey, into the fields it names (the table's order, so warnings
 * come in the order of docs/instance-ha-rules.md#configuration-keys).
 */
function readTable(
  read: (name: string, key: ConfigKey) => KeyReading,
  warnings: ConfigWarning[],
  sources: Record<string, ConfigValueSource>,
): TableFields {
  const fields: Record<string, unknown> = {};
  for (const [name, key] of Object.entries(TABLE_KEYS) as Array<[string, ConfigKey]>) {
    const reading = read(name, key);
    fields[key.field] = reading.value;
    sources[name] = reading.origin;
    warnings.push(...reading.warnings);
  }
  // Each value is the output of its key's schema (or its default), so the fields have TableFields' types.
  return fields as TableFields;
}

/**
 * SKIP_SERVERS_WITH_METADATA: every item `key=value` with a non-empty key (a lifeguard key: a wrong
 * item would silently exclude nothing, so it stops start-up instead).
 * @throws ConfigError naming the key and each bad item
 */
function checkMetadataExclusions(items: ReadonlyArray<string>, source: string): void {
  const bad = items.filter((item) => parseMetadataMatch(item) === null);
  if (bad.length === 0) return;
  throw new ConfigError(
    bad.map((item) => ({
      key: 'SKIP_SERVERS_WITH_METADATA',
      source,
      problem: 'each item must be key=value with a non-empty key',
      value: JSON.stringify(item),
    })),
  );
}

/**
 * HEARTBEAT_DETECTION needs the heartbeat listener, which CHECK_HEARTBEAT starts: detection on
 * heartbeats nobody listens to would never detect anything (a lifeguard key: stops start-up).
 * @throws ConfigError naming HEARTBEAT_DETECTION
 */
function checkHeartbeatDetection(fields: TableFields, source: string): void {
  if (!fields.heartbeatDetection || fields.checkHeartbeat) return;
  throw new ConfigError([
    {
      key: 'HEARTBEAT_DETECTION',
      source,
      problem: 'needs CHECK_HEARTBEAT: true (the heartbeat listener hears the host agents)',
      value: 'true',
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
 *   DEBUG/INFO/WARNING/ERROR/CRITICAL, an invalid KDUMP_ADDRESS_MAP, a SKIP_SERVERS_WITH_METADATA item
 *   that is not key=value, HEARTBEAT_DETECTION without CHECK_HEARTBEAT
 */
export function loadInstanceHaConfig(options: LoadInstanceHaConfigOptions = {}): LoadedInstanceHaConfig {
  const env = options.env ?? process.env;
  const allowBelowMinimum = options.allowBelowMinimum ?? shortIntervalsAllowed(env);
  const path = options.path ?? (env.INSTANCEHA_CONFIG_PATH || DEFAULT_CONFIG_PATH);
  const file = configMapping(path);
  const warnings: ConfigWarning[] = file.warning ? [file.warning] : [];
  const known = new Set<string>([...Object.keys(TABLE_KEYS), ...LIFEGUARD_KEYS]);
  const fileKeys = Object.keys(file.values);
  const unknownKeys = fileKeys.filter((key) => !known.has(key) && !UNUSED_INSTANCE_HA_KEYS.includes(key));
  const unusedKeys = fileKeys.filter((key) => UNUSED_INSTANCE_HA_KEYS.includes(key));
  warnings.push(...misspelledKeyWarnings(unknownKeys, [...known, ...UNUSED_INSTANCE_HA_KEYS], path));

  const given = (name: string): GivenValue | null => {
    const fromEnv = env[name];
    if (fromEnv !== undefined && fromEnv !== '')
      return { raw: fromEnv, source: 'environment', origin: 'environment' };
    if (file.values[name] !== undefined) return { raw: file.values[name], source: path, origin: 'file' };
    return null;
  };
  const sources: Record<string, ConfigValueSource> = {};
  const fields = readTable(
    (name, key) => readKey(name, key, given(name), { allowBelowMinimum, port: name in PORT_KEYS }),
    warnings,
    sources,
  );
  checkMetadataExclusions(
    fields.skipServersWithMetadata,
    given('SKIP_SERVERS_WITH_METADATA')?.source ?? path,
  );
  checkHeartbeatDetection(fields, given('HEARTBEAT_DETECTION')?.source ?? path);
  const forcedDisabled = env.INSTANCEHA_DISABLED === 'True';
  if (forcedDisabled) sources.DISABLED = 'environment';
  const addressMap = given('KDUMP_ADDRESS_MAP');
  sources.KDUMP_ADDRESS_MAP = addressMap?.origin ?? 'default';
  const config: InstanceHaConfig = {
    ...fields,
    disabled: forcedDisabled || fields.disabled,
    pinoLogLevel: LOG_LEVELS[fields.logLevel],
    kdumpAddressMap: addressMap ? parseAddressMap(addressMap.raw, addressMap.source) : new Map(),
    thresholdSuspectAgeSeconds:
      fields.thresholdSuspectAgeSeconds > 0
        ? fields.thresholdSuspectAgeSeconds
        : Math.max(1, fields.deltaSeconds / 2),
    massEventHoldDownSeconds:
      fields.massEventHoldDownSeconds > 0 ? fields.massEventHoldDownSeconds : 2 * fields.deltaSeconds,
  };
  return { config, path, fileFound: file.found, warnings, unknownKeys, unusedKeys, sources };
}
