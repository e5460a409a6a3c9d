import type { z } from 'zod';
import {
  BooleanValue,
  type InstanceHaLogLevel,
  IntegerValue,
  ListValue,
  LOG_LEVELS,
  LogLevelValue,
  PathValue,
  TextValue,
} from './values.ts';

/**
 * Every key of InstanceHA's `config.yaml` (docs/instance-ha-rules.md#configuration-keys), said once:
 * its name, the InstanceHaConfig field it fills, the zod schema that reads its raw value, its
 * default, and for integers the range InstanceHA clamps to and the unit. Keys keep InstanceHA's names
 * so an operator's existing file works unchanged; InstanceHaConfig's type is inferred from this table.
 */

interface KeyOf<Kind extends string, Field extends string, Schema extends z.ZodType> {
  readonly kind: Kind;
  /** The InstanceHaConfig field the key fills. */
  readonly field: Field;
  /** Reads the raw value (a string from the environment, any YAML value from the file). */
  readonly schema: Schema;
  readonly default: z.output<Schema>;
  /** What an unreadable value is, for the warning: `not an integer (seconds)`. */
  readonly problem: string;
}

/** An integer key: read as Python's `int()`, unreadable → default, out of range → clamped. */
export interface IntegerKey<Field extends string = string>
  extends KeyOf<'integer', Field, typeof IntegerValue> {
  readonly minimum: number;
  readonly maximum: number;
  /** The unit, for messages and docs: `seconds`, `percent`, `hosts`, ... */
  readonly unit: string;
}

/** A boolean key: a YAML boolean, or a string whose lower case is true/1/yes/on/enabled. */
export type BooleanKey<Field extends string = string> = KeyOf<'boolean', Field, typeof BooleanValue>;

/** A string key. */
export type StringKey<Field extends string = string> = KeyOf<'string', Field, typeof TextValue>;

/** A list key: a YAML list, or a comma-separated string (items trimmed, empty items dropped). */
export type ListKey<Field extends string = string> = KeyOf<'list', Field, typeof ListValue>;

/** A file path (optional; used only when the file exists, as InstanceHA's SSL_* keys). */
export type PathKey<Field extends string = string> = KeyOf<'path', Field, typeof PathValue>;

/** LOGLEVEL: one of LOG_LEVELS; any other value stops start-up. */
export type LogLevelKey<Field extends string = string> = KeyOf<'log-level', Field, typeof LogLevelValue>;

export type ConfigKey = IntegerKey | BooleanKey | StringKey | ListKey | PathKey | LogLevelKey;

const integer = <const Field extends string>(
  field: Field,
  defaultValue: number,
  minimum: number,
  maximum: number,
  unit: string,
): IntegerKey<Field> => ({
  kind: 'integer',
  field,
  schema: IntegerValue,
  default: defaultValue,
  problem: `not an integer (${unit})`,
  minimum,
  maximum,
  unit,
});
const boolean = <const Field extends string>(field: Field, defaultValue: boolean): BooleanKey<Field> => ({
  kind: 'boolean',
  field,
  schema: BooleanValue,
  default: defaultValue,
  problem: 'not a boolean (true/false, yes/no, on/off, 1/0, enabled)',
});
const text = <const Field extends string>(field: Field, defaultValue: string): StringKey<Field> => ({
  kind: 'string',
  field,
  schema: TextValue,
  default: defaultValue,
  problem: 'not a non-empty string',
});
const list = <const Field extends string>(field: Field): ListKey<Field> => ({
  kind: 'list',
  field,
  schema: ListValue,
  default: [],
  problem: 'not a list of strings or a comma-separated string',
});
const path = <const Field extends string>(field: Field): PathKey<Field> => ({
  kind: 'path',
  field,
  schema: PathValue,
  default: null,
  problem: 'not a file path',
});
const logLevel = <const Field extends string>(
  field: Field,
  defaultValue: InstanceHaLogLevel,
): LogLevelKey<Field> => ({
  kind: 'log-level',
  field,
  schema: LogLevelValue,
  default: defaultValue,
  problem: `must be one of ${Object.keys(LOG_LEVELS).join(', ')}`,
});

/**
 * InstanceHA's keys (docs/instance-ha-rules.md#configuration-keys), in the order of its table; the
 * field comments give the meaning, the default and the range.
 */
export const INSTANCE_HA_KEYS = {
  /** Seconds between two polls of Nova's service list. 45, 15–600. */
  POLL: integer('pollSeconds', 45, 15, 600, 'seconds'),
  /** A service whose `updated_at` is older than this many seconds counts as failed. 30, 10–300. */
  DELTA: integer('deltaSeconds', 30, 10, 300, 'seconds'),
  /** Block fencing when impacted hosts are strictly more than this percentage. 50, 0–100. */
  THRESHOLD: integer('thresholdPercent', 50, 0, 100, 'percent'),
  /** At most this many new failed hosts admitted per poll cycle. 10, 1–200. */
  MAX_HOSTS_PER_CYCLE: integer('maxHostsPerCycle', 10, 1, 200, 'hosts'),
  /** Seconds between control-plane reachability probes. 15, 5–120. */
  K8S_API_CHECK_INTERVAL: integer('k8sApiCheckIntervalSeconds', 15, 5, 120, 'seconds'),
  /** Hosts processed concurrently. 4, 1–100. */
  WORKERS: integer('workers', 4, 1, 100, 'hosts'),
  /** Seconds to wait after fencing and disabling, before the first evacuate call. 0, 0–300. */
  DELAY: integer('delaySeconds', 0, 0, 300, 'seconds'),
  /** Concurrent evacuations in total; per host max(1, this ÷ WORKERS). 32, 1–512. */
  EVACUATION_MAX_THREADS: integer('evacuationMaxThreads', 32, 1, 512, 'instances'),
  /** Errors of one instance's evacuation that end it as failed. 5, 1–20. */
  EVACUATION_RETRIES: integer('evacuationRetries', 5, 1, 20, 'attempts'),
  /** Seconds between submitting two evacuations of a phase. 0, 0–60. */
  EVACUATION_STAGGER: integer('evacuationStaggerSeconds', 0, 0, 60, 'seconds'),
  /** Seconds one tracked instance evacuation may take. 300, 60–3600. */
  EVACUATION_TIMEOUT: integer('evacuationTimeoutSeconds', 300, 60, 3600, 'seconds'),
  /** Track each instance's evacuation migration to completion. */
  SMART_EVACUATION: boolean('smartEvacuation', false),
  /** Priority-ordered phases from server metadata (implies tracking). */
  ORCHESTRATED_RESTART: boolean('orchestratedRestart', false),
  /** Tag / key name marking evacuable images, flavors and aggregates. */
  EVACUABLE_TAG: text('evacuableTag', 'evacuable'),
  /** Consider image tags and properties. */
  TAGGED_IMAGES: boolean('taggedImages', true),
  /** Consider flavor extra specs. */
  TAGGED_FLAVORS: boolean('taggedFlavors', true),
  /** Only hosts in evacuable aggregates are handled (fail-closed). */
  TAGGED_AGGREGATES: boolean('taggedAggregates', true),
  /** Case-sensitive fnmatch globs; matching servers are never evacuated. */
  SKIP_SERVERS_WITH_NAME: list('skipServersWithName'),
  /** Enable a spare host when one fails. */
  RESERVED_HOSTS: boolean('reservedHosts', false),
  /** Send the enabled spare as the evacuate `host`. */
  FORCE_RESERVED_HOST_EVACUATION: boolean('forceReservedHostEvacuation', false),
  /** Never re-enable evacuated hosts automatically. */
  LEAVE_DISABLED: boolean('leaveDisabled', false),
  /** Skip the "evacuations still in progress" check before re-enabling. */
  FORCE_ENABLE: boolean('forceEnable', false),
  /** Listen for fence_kdump packets and wait for them before power fencing. */
  CHECK_KDUMP: boolean('checkKdump', false),
  /** Seconds to wait for a first kdump packet before normal fencing. 30, 5–300. */
  KDUMP_TIMEOUT: integer('kdumpTimeoutSeconds', 30, 5, 300, 'seconds'),
  /** Use the HBV2 heartbeat channel as a second failure signal. */
  CHECK_HEARTBEAT: boolean('checkHeartbeat', false),
  /** A heartbeat older than this many seconds means silent. 120, 30–600. */
  HEARTBEAT_TIMEOUT: integer('heartbeatTimeoutSeconds', 120, 30, 600, 'seconds'),
  /** Percentage drop of active heartbeats in one cycle = partition. 50, 10–100. */
  HEARTBEAT_CLIFF_THRESHOLD: integer('heartbeatCliffThresholdPercent', 50, 10, 100, 'percent'),
  /** Consecutive cliff cycles after which the loss is accepted. 3, 1–20. */
  HEARTBEAT_CLIFF_MAX_CYCLES: integer('heartbeatCliffMaxCycles', 3, 1, 20, 'cycles'),
  /** Seconds per fencing request and power-off wait. 30, 5–120. */
  FENCING_TIMEOUT: integer('fencingTimeoutSeconds', 30, 5, 120, 'seconds'),
  /** Verify TLS certificates of Redfish BMCs. */
  SSL_VERIFY: boolean('sslVerify', true),
  /** No fencing and no evacuation (polling and re-enabling go on). */
  DISABLED: boolean('disabled', false),
  /** DEBUG, INFO, WARNING, ERROR or CRITICAL (config.pinoLogLevel is the pino level). */
  LOGLEVEL: logLevel('logLevel', 'INFO'),
  /** Seconds between refreshes of InstanceHA's liveness hash. 60, 30–300. */
  HASH_INTERVAL: integer('hashIntervalSeconds', 60, 30, 300, 'seconds'),
  /** CA bundle for Redfish, or null. */
  SSL_CA_BUNDLE: path('sslCaBundle'),
  /** Client certificate for Redfish, or null. */
  SSL_CERT_PATH: path('sslCertPath'),
  /** Client key for Redfish, or null. */
  SSL_KEY_PATH: path('sslKeyPath'),
} as const satisfies Record<string, ConfigKey>;

/**
 * Keys InstanceHA reads from its environment rather than config.yaml (docs/instance-ha-rules.md#environment): the kdump and
 * heartbeat UDP ports. lifeguard accepts them in either place. Invalid or out-of-range → the default
 * with a warning (as InstanceHA).
 */
export const PORT_KEYS = {
  /** UDP port of the fence_kdump listener. 7410. */
  UDP_PORT: integer('kdumpPort', 7410, 1, 65535, 'port'),
  /** UDP port of the heartbeat listener. 7411. */
  HEARTBEAT_PORT: integer('heartbeatPort', 7411, 1, 65535, 'port'),
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
 *
 * MASS_EVENT_HOLD_DOWN: seconds a host that went silent as part of a blocked mass event (heartbeat
 * cliff, all-services-stale, THRESHOLD, `instanceha:max_failures`) must stay silent after the block
 * cleared for it before it is admitted (docs/instance-ha-rules.md#mass-event-hold-down). 0 (the
 * default) means 2 × DELTA.
 *
 * HEARTBEAT_DOWN_AFTER: seconds without a host agent's heartbeat on a network after which that network
 * counts as silent for the host (docs/host-agent.md#what-the-node-monitor-makes-of-it). 3, 1–60.
 *
 * NOVA_REPORT_INTERVAL: the computes' nova.conf `[DEFAULT] report_interval`, seconds (Nova's default
 * 10). With HEARTBEAT_DETECTION a host whose agent fell silent is failed only once nova-compute's next
 * report is overdue too (docs/host-agent.md#detection-on-heartbeats): a host agent that died on a live
 * host is told from a dead host by Nova's reports. 10, 1–300.
 */
export const LIFEGUARD_INTEGER_KEYS = {
  THRESHOLD_SUSPECT_AGE: integer('thresholdSuspectAgeSeconds', 0, 0, 300, 'seconds'),
  MASS_EVENT_HOLD_DOWN: integer('massEventHoldDownSeconds', 0, 0, 3600, 'seconds'),
  HEARTBEAT_DOWN_AFTER: integer('heartbeatDownAfterSeconds', 3, 1, 60, 'seconds'),
  NOVA_REPORT_INTERVAL: integer('novaReportIntervalSeconds', 10, 1, 300, 'seconds'),
} as const satisfies Record<string, IntegerKey>;

/**
 * lifeguard's own boolean keys, read as InstanceHA's booleans are.
 *
 * HEARTBEAT_DETECTION: a host whose lifeguard host agent fell silent on every network for
 * HEARTBEAT_DOWN_AFTER seconds, while nova-compute's own report is overdue, is a failed host without
 * waiting for DELTA (docs/host-agent.md#detection-on-heartbeats). Needs CHECK_HEARTBEAT. Off by
 * default: Nova's DELTA stays the failure signal, as in InstanceHA.
 */
export const LIFEGUARD_BOOLEAN_KEYS = {
  HEARTBEAT_DETECTION: boolean('heartbeatDetection', false),
} as const satisfies Record<string, BooleanKey>;

/**
 * lifeguard's own server exclusions, lists read as SKIP_SERVERS_WITH_NAME is
 * (docs/instance-ha-rules.md#server-exclusions): servers another service owns (load-balancer
 * amphorae, routers, a database cluster's members) that an operator keeps out of every evacuation.
 *
 * SKIP_SERVERS_IN_PROJECT: project ids or names (names are looked up in Keystone: ExcludedProjects); a
 * server whose project is one of them is never evacuated.
 * SKIP_SERVERS_WITH_TAG: Nova server tags (`openstack server set --tag`); a server carrying any is never evacuated.
 * SKIP_SERVERS_WITH_METADATA: `key=value` items; a server whose metadata has that key with exactly
 * that value is never evacuated. An item without `=` or with an empty key stops start-up.
 */
export const LIFEGUARD_LIST_KEYS = {
  SKIP_SERVERS_IN_PROJECT: list('skipServersInProject'),
  SKIP_SERVERS_WITH_TAG: list('skipServersWithTag'),
  SKIP_SERVERS_WITH_METADATA: list('skipServersWithMetadata'),
} as const satisfies Record<string, ListKey>;

/** Keys present in InstanceHA's shipped config.yaml that no code reads; accepted silently. */
export const UNUSED_INSTANCE_HA_KEYS: ReadonlyArray<string> = ['WATCHDOG_TIMEOUT'];

/**
 * lifeguard's own keys (InstanceHA ignores unknown keys, so they may share the file):
 * `KDUMP_ADDRESS_MAP` maps a fence_kdump source address to a compute host, as a YAML mapping
 * (`{"192.0.2.10": compute-0}`) or a comma list `192.0.2.10=compute-0,2001:db8::10=compute-0`.
 * Invalid values stop start-up (there is no InstanceHA behaviour to stay compatible with).
 */
export const LIFEGUARD_KEYS = ['KDUMP_ADDRESS_MAP'] as const;

/** Every key read as its table says, in the order warnings are reported. */
export const TABLE_KEYS = {
  ...INSTANCE_HA_KEYS,
  ...PORT_KEYS,
  ...LIFEGUARD_INTEGER_KEYS,
  ...LIFEGUARD_BOOLEAN_KEYS,
  ...LIFEGUARD_LIST_KEYS,
} as const;

export type InstanceHaKeyName = keyof typeof INSTANCE_HA_KEYS;
export type PortKeyName = keyof typeof PORT_KEYS;

/** The InstanceHaConfig fields the table gives: each key's field, typed by the output of its schema. */
export type TableFields = {
  readonly [Name in keyof typeof TABLE_KEYS as (typeof TABLE_KEYS)[Name]['field']]: z.output<
    (typeof TABLE_KEYS)[Name]['schema']
  >;
};

export { type InstanceHaLogLevel, LOG_LEVELS } from './values.ts';
