/**
 * Every key of InstanceHA's `config.yaml` (docs/instance-ha-rules.md#configuration-keys), with its type, default and
 * clamping range, plus the few keys lifeguard adds. Keys keep InstanceHA's names so an operator's
 * existing file works unchanged.
 */

/** An integer key: parsed like Python's `int()`, unparsable → default, out of range → clamped. */
export interface IntegerKey {
  readonly kind: 'integer';
  readonly default: number;
  readonly minimum: number;
  readonly maximum: number;
  /** The unit, for messages and docs: `seconds`, `percent`, `hosts`, ... */
  readonly unit: string;
}

/** A boolean key: a YAML boolean, or a string whose lower case is true/1/yes/on/enabled. */
export interface BooleanKey {
  readonly kind: 'boolean';
  readonly default: boolean;
}

/** A string key. */
export interface StringKey {
  readonly kind: 'string';
  readonly default: string;
}

/** A list key: a YAML list, or a comma-separated string (items trimmed, empty items dropped). */
export interface ListKey {
  readonly kind: 'list';
  readonly default: ReadonlyArray<string>;
}

/** A file path (optional; used only when the file exists, as InstanceHA's SSL_* keys). */
export interface PathKey {
  readonly kind: 'path';
  readonly default: null;
}

export type ConfigKey = IntegerKey | BooleanKey | StringKey | ListKey | PathKey;

const integer = (defaultValue: number, minimum: number, maximum: number, unit: string): IntegerKey => ({
  kind: 'integer',
  default: defaultValue,
  minimum,
  maximum,
  unit,
});
const boolean = (defaultValue: boolean): BooleanKey => ({ kind: 'boolean', default: defaultValue });

/** InstanceHA's keys (docs/instance-ha-rules.md#configuration-keys), in the order of its table. */
export const INSTANCE_HA_KEYS = {
  POLL: integer(45, 15, 600, 'seconds'),
  DELTA: integer(30, 10, 300, 'seconds'),
  THRESHOLD: integer(50, 0, 100, 'percent'),
  MAX_HOSTS_PER_CYCLE: integer(10, 1, 200, 'hosts'),
  K8S_API_CHECK_INTERVAL: integer(15, 5, 120, 'seconds'),
  WORKERS: integer(4, 1, 100, 'hosts'),
  DELAY: integer(0, 0, 300, 'seconds'),
  EVACUATION_MAX_THREADS: integer(32, 1, 512, 'instances'),
  EVACUATION_RETRIES: integer(5, 1, 20, 'attempts'),
  EVACUATION_STAGGER: integer(0, 0, 60, 'seconds'),
  EVACUATION_TIMEOUT: integer(300, 60, 3600, 'seconds'),
  SMART_EVACUATION: boolean(false),
  ORCHESTRATED_RESTART: boolean(false),
  EVACUABLE_TAG: { kind: 'string', default: 'evacuable' } as StringKey,
  TAGGED_IMAGES: boolean(true),
  TAGGED_FLAVORS: boolean(true),
  TAGGED_AGGREGATES: boolean(true),
  SKIP_SERVERS_WITH_NAME: { kind: 'list', default: [] } as ListKey,
  RESERVED_HOSTS: boolean(false),
  FORCE_RESERVED_HOST_EVACUATION: boolean(false),
  LEAVE_DISABLED: boolean(false),
  FORCE_ENABLE: boolean(false),
  CHECK_KDUMP: boolean(false),
  KDUMP_TIMEOUT: integer(30, 5, 300, 'seconds'),
  CHECK_HEARTBEAT: boolean(false),
  HEARTBEAT_TIMEOUT: integer(120, 30, 600, 'seconds'),
  HEARTBEAT_CLIFF_THRESHOLD: integer(50, 10, 100, 'percent'),
  HEARTBEAT_CLIFF_MAX_CYCLES: integer(3, 1, 20, 'cycles'),
  FENCING_TIMEOUT: integer(30, 5, 120, 'seconds'),
  SSL_VERIFY: boolean(true),
  DISABLED: boolean(false),
  LOGLEVEL: { kind: 'string', default: 'INFO' } as StringKey,
  HASH_INTERVAL: integer(60, 30, 300, 'seconds'),
  SSL_CA_BUNDLE: { kind: 'path', default: null } as PathKey,
  SSL_CERT_PATH: { kind: 'path', default: null } as PathKey,
  SSL_KEY_PATH: { kind: 'path', default: null } as PathKey,
} as const satisfies Record<string, ConfigKey>;

/**
 * Keys InstanceHA reads from its environment rather than config.yaml (docs/instance-ha-rules.md#environment): the kdump and
 * heartbeat UDP ports. lifeguard accepts them in either place. Invalid or out-of-range → the default
 * with a warning (as InstanceHA).
 */
export const PORT_KEYS = {
  UDP_PORT: integer(7410, 1, 65535, 'port'),
  HEARTBEAT_PORT: integer(7411, 1, 65535, 'port'),
} as const satisfies Record<string, IntegerKey>;

/**
 * lifeguard's own integer keys, parsed and clamped as InstanceHA's are.
 *
 * THRESHOLD_SUSPECT_AGE: seconds without a service report after which a compute service that is not
 * yet failed (its `updated_at` younger than DELTA, Nova still says up) already counts as impacted for
 * THRESHOLD, `instanceha:max_failures` and the all-services-stale breaker — it is never fenced for it.
 * Hosts cut off by one partition stop reporting together, but their last reports are spread over
 * Nova's `report_interval`, so they cross DELTA over several polls; counting the silent ones lets the
 * first poll see the partition whole. 0 (the default) means DELTA ÷ 2, which catches every host of a
 * partition on its first poll when DELTA ≥ 2 × report_interval + THRESHOLD_SUSPECT_AGE (Nova's
 * default report_interval 10 s with DELTA 30 s: 20 ≥ 15). It must stay above report_interval plus
 * a margin, or healthy hosts between two reports would count.
 */
export const LIFEGUARD_INTEGER_KEYS = {
  THRESHOLD_SUSPECT_AGE: integer(0, 0, 300, 'seconds'),
} as const satisfies Record<string, IntegerKey>;

/** Keys present in InstanceHA's shipped config.yaml that no code reads; accepted silently. */
export const UNUSED_INSTANCE_HA_KEYS: ReadonlyArray<string> = ['WATCHDOG_TIMEOUT'];

/**
 * lifeguard's own keys (InstanceHA ignores unknown keys, so they may share the file):
 * `KDUMP_ADDRESS_MAP` maps a fence_kdump source address to a compute host, as a YAML mapping
 * (`{"192.0.2.10": compute-0}`) or a comma list `192.0.2.10=compute-0,2001:db8::10=compute-0`.
 * Invalid values stop start-up (there is no InstanceHA behaviour to stay compatible with).
 */
export const LIFEGUARD_KEYS = ['KDUMP_ADDRESS_MAP'] as const;

export type InstanceHaKeyName = keyof typeof INSTANCE_HA_KEYS;
export type PortKeyName = keyof typeof PORT_KEYS;

/** LOGLEVEL values InstanceHA accepts (upper-cased first), mapped to pino's levels. */
export const LOG_LEVELS = {
  DEBUG: 'debug',
  INFO: 'info',
  WARNING: 'warn',
  ERROR: 'error',
  CRITICAL: 'fatal',
} as const;
export type InstanceHaLogLevel = keyof typeof LOG_LEVELS;
