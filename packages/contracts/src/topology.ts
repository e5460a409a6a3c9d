/**
 * Names of every exchange, queue and routing key lifeguard declares or uses, in one place.
 * Queues lifeguard owns are quorum queues; the oslo.messaging topics belong to the agents' deployment
 * and are declared with oslo's own flags (docs/oslo-messaging.md#topology).
 */

/** Topic exchange every lifeguard event is published to; routing key = `eventRoutingKey(event)`. */
export const EVENTS_EXCHANGE = 'lifeguard.events';

/** Fanout-less direct exchange of dead letters, with the reason in headers (see DEAD_LETTER_HEADERS). */
export const DEAD_LETTER_EXCHANGE = 'lifeguard.dead-letter';
/** The queue bound to the dead-letter exchange; `lifeguard dlq list|replay|purge` reads it. */
export const DEAD_LETTER_QUEUE = 'lifeguard.dead-letter';

/** Headers carried by a dead-lettered message. */
export const DEAD_LETTER_HEADERS = {
  reason: 'x-lifeguard-dead-letter-reason',
  queue: 'x-lifeguard-original-queue',
  exchange: 'x-lifeguard-original-exchange',
  routingKey: 'x-lifeguard-original-routing-key',
  at: 'x-lifeguard-dead-lettered-at',
  service: 'x-lifeguard-dead-lettered-by',
} as const;

/** Headers `lifeguard dlq replay` puts on a message it sends back to its queue (audit trail). */
export const REPLAY_HEADERS = {
  /** ISO 8601 time of the replay. */
  at: 'x-lifeguard-replayed-at',
  /** Who replayed it (`<operator>@<host>`). */
  by: 'x-lifeguard-replayed-by',
  /** How many times this message has been replayed from the dead-letter queue. */
  count: 'x-lifeguard-replay-count',
} as const;

/** Topic exchange of native provisioning commands; routing key = the command name (`port.create`). */
export const PROVISIONING_COMMANDS_EXCHANGE = 'lifeguard.provisioning.commands';
/** Topic exchange of native agent messages; routing key = the message type (`device.up`). */
export const NATIVE_AGENTS_EXCHANGE = 'lifeguard.provisioning.agents';

/** Durable queues lifeguard owns. */
export const QUEUES = {
  /** provisioning-blocks: native commands. */
  provisioningCommands: 'lifeguard.provisioning-blocks.commands',
  /** provisioning-blocks: native agent messages. */
  nativeAgents: 'lifeguard.provisioning-blocks.agents',
  /** port-status subscriber: `provisioning.complete.port` events. */
  provisioningComplete: 'lifeguard.port-status.provisioning-complete',
  /** port-status subscriber's Nova notifier: `port.status.changed` and `port.vif.plugged` events. */
  novaPortNotifications: 'lifeguard.port-status.nova-notifications',
  /** fencing-worker intake: `host.down` events. */
  hostDown: 'lifeguard.fencing-worker.host-down',
  /** evacuation-worker intake: `host.recovery.requested` events. */
  hostRecovery: 'lifeguard.evacuation-worker.host-recovery',
  /** every event, kept per incident for `lifeguard incident <id>`. */
  eventJournal: 'lifeguard.event-journal',
} as const;

/** Neutron's oslo.messaging RPC names (docs/neutron-provisioning-rules.md#agent-topics): control exchange and the agent topics. */
export const NEUTRON_RPC = {
  controlExchange: 'neutron',
  pluginTopic: 'q-plugin',
  reportsTopic: 'q-reports-plugin',
} as const;

/** BullMQ queue names. */
export const JOB_QUEUES = {
  /** `fence` and `power-on` jobs (fencing-worker). */
  fencing: 'fencing',
  /** `evacuate-host` parent jobs (evacuation-worker). */
  evacuation: 'evacuation',
  /** `evacuate-instance` child jobs (evacuation-worker, scaled out). */
  evacuationInstance: 'evacuation-instance',
  /** `reenable` jobs (evacuation-worker). */
  recovery: 'recovery',
  /** `instance-restart` jobs: one crashed guest each (instance-restart-worker). */
  instanceRestart: 'instance-restart',
} as const;

/** BullMQ job names within those queues. */
export const JOB_NAMES = {
  fence: 'fence',
  powerOn: 'power-on',
  evacuateHost: 'evacuate-host',
  evacuateInstance: 'evacuate-instance',
  reenable: 'reenable',
  instanceRestart: 'instance-restart',
} as const;

/**
 * BullMQ backoff types the workers understand. A producer adding a job to the `fencing` queue (the
 * evacuation worker's `power-on` jobs) sets `backoff: { type: BACKOFF_TYPES.byErrorKind }` and
 * `attempts`; the fencing worker then waits longer between attempts when the BMC is unreachable than
 * when it answered and refused.
 */
export const BACKOFF_TYPES = {
  byErrorKind: 'by-error-kind',
} as const;
