import { z } from 'zod';
import { RedisMemoryLostEvent } from './deployment-events.ts';
import { eventBase as base } from './event-base.ts';
import {
  HostAgentSilentEvent,
  HostComputeServiceDisabledEvent,
  HostComputeServiceEnabledEvent,
  HostNetworkHeardEvent,
  HostNetworkSilentEvent,
  HostProcessRunningEvent,
  HostProcessStoppedEvent,
} from './host-agent-events.ts';
import { HostName, IncidentId, Timestamp } from './identifiers.ts';
import {
  InstanceRestartCompletedEvent,
  InstanceRestartFailedEvent,
  InstanceRestartGivenUpEvent,
  InstanceRestartStartedEvent,
} from './instance-restart-events.ts';
import {
  PortStatusChangedEvent,
  PortVifPluggedEvent,
  ProvisioningCompleteEvent,
} from './provisioning-event-schemas.ts';
import { HostCapacityInsufficientEvent, InstanceEvacuationSkippedEvent } from './servers-left-events.ts';

export { RedisMemoryLostEvent } from './deployment-events.ts';
export { EVENT_SCHEMA_VERSION, EventSource } from './event-base.ts';
export {
  InstanceRestartCompletedEvent,
  InstanceRestartFailedEvent,
  InstanceRestartGivenUpEvent,
  InstanceRestartStartedEvent,
} from './instance-restart-events.ts';
export {
  HostCapacityInsufficientEvent,
  HostUnavailability,
  InstanceEvacuationSkippedEvent,
} from './servers-left-events.ts';

/** Why the node monitor considers a compute service failed: what Nova reported, and how old it was. */
export const HostDownEvidence = z.object({
  serviceId: z.string().min(1),
  state: z.string(),
  status: z.string(),
  forcedDown: z.boolean(),
  updatedAt: Timestamp.nullable(),
  /** Seconds between `updated_at` and the poll, or null when Nova gave no `updated_at`. */
  ageSeconds: z.number().nullable(),
  disabledReason: z.string().nullable(),
  zone: z.string().nullable(),
  /**
   * Present when the host was failed on its host agent's silence (HEARTBEAT_DETECTION), before Nova
   * called it down: the rule's words, e.g. `host agent silent on every network (mgmt, storage) for 3.2 s; ...`.
   */
  hostAgentSilence: z.string().optional(),
});
export type HostDownEvidence = z.infer<typeof HostDownEvidence>;

/**
 * A compute host was admitted as failed by the leading node monitor. `fencingToken` is the monitor's
 * leader-lease token: consumers drop events whose token is older than the newest they have seen.
 */
export const HostDownEvent = z.object({
  ...base,
  type: z.literal('host.down'),
  data: z.object({
    host: HostName,
    incidentId: IncidentId,
    fencingToken: z.number().int().nonnegative(),
    evidence: HostDownEvidence,
    /** The host was seen sending fence_kdump packets: it is in its crash kernel, no power fencing. */
    kdumpFenced: z.boolean(),
    /** The incident was already open (resume after a restart), not a fresh failure. */
    resume: z.boolean(),
  }),
});

/**
 * How a host's fencing was established for an incident: its power read back as off
 * (`power-off-confirmed`), fence_kdump packets from its crash kernel (`kdump`), an operator's
 * confirmation (`operator-confirmed`), or — on test beds only, where LIFEGUARD_FENCING_ALLOW_NOOP
 * allows the `noop` method — `noop`: nothing was powered off.
 */
export const FenceProof = z.enum(['power-off-confirmed', 'kdump', 'operator-confirmed', 'noop']);
export type FenceProof = z.infer<typeof FenceProof>;

/** A host was fenced: its power was confirmed off (or kdump / an operator vouched) in this incident. */
export const HostFencedEvent = z.object({
  ...base,
  type: z.literal('host.fenced'),
  data: z.object({
    host: HostName,
    incidentId: IncidentId,
    proof: FenceProof,
    /** The fencing method that succeeded (`ipmi`, `redfish`, `fence_ipmilan`, `kdump`, `operator`, ...). */
    method: z.string().min(1),
    /** The fence job's attempts, failed ones before included; 0 when no power action fenced it (kdump, operator). */
    attempts: z.number().int().nonnegative(),
    durationSeconds: z.number().nonnegative(),
    /**
     * For an operator's confirmation given with `--host-is-reporting-override`: the evidence of a
     * reporting host that the operator overrode (e.g. `Nova: state up, updated_at 2 s ago (DELTA 30 s)`);
     * null or absent otherwise.
     */
    reportingOverride: z.string().nullable().optional(),
  }),
});

/** Fencing failed; when `recoverable` is false the host is left alone for a person (not marked, not evacuated). */
export const HostFencingFailedEvent = z.object({
  ...base,
  type: z.literal('host.fencing.failed'),
  data: z.object({
    host: HostName,
    incidentId: IncidentId,
    reason: z.string(),
    recoverable: z.boolean(),
    attempts: z.number().int().nonnegative(),
  }),
});

/** Evacuation modes, as InstanceHA's SMART_EVACUATION / ORCHESTRATED_RESTART select them. */
export const EvacuationMode = z.enum(['traditional', 'smart', 'orchestrated']);
export type EvacuationMode = z.infer<typeof EvacuationMode>;

export const HostEvacuationStartedEvent = z.object({
  ...base,
  type: z.literal('host.evacuation.started'),
  data: z.object({
    host: HostName,
    incidentId: IncidentId,
    mode: EvacuationMode,
    instanceCount: z.number().int().nonnegative(),
    reservedHost: HostName.nullable(),
  }),
});

/** Every evacuable instance of the host is ACTIVE elsewhere (or accepted, in traditional mode). */
export const HostEvacuatedEvent = z.object({
  ...base,
  type: z.literal('host.evacuated'),
  data: z.object({
    host: HostName,
    incidentId: IncidentId,
    mode: EvacuationMode,
    evacuatedInstances: z.array(z.string()),
    durationSeconds: z.number().nonnegative(),
    poweredOn: z.boolean(),
  }),
});

export const HostEvacuationFailedEvent = z.object({
  ...base,
  type: z.literal('host.evacuation.failed'),
  data: z.object({
    host: HostName,
    incidentId: IncidentId,
    failedInstances: z.array(z.string()),
    reason: z.string(),
  }),
});

export const InstanceEvacuatedEvent = z.object({
  ...base,
  type: z.literal('instance.evacuated'),
  data: z.object({
    host: HostName,
    incidentId: IncidentId,
    instanceId: z.string().min(1),
    instanceName: z.string(),
    targetHost: z.string().nullable(),
    migrationStatus: z.string().nullable(),
    attempts: z.number().int().nonnegative(),
    novaRequestId: z.string().nullable(),
    durationSeconds: z.number().nonnegative(),
  }),
});

export const InstanceEvacuationFailedEvent = z.object({
  ...base,
  type: z.literal('instance.evacuation.failed'),
  data: z.object({
    host: HostName,
    incidentId: IncidentId,
    instanceId: z.string().min(1),
    instanceName: z.string(),
    reason: z.string(),
    attempts: z.number().int().nonnegative(),
    novaRequestId: z.string().nullable(),
  }),
});

/**
 * A host came back before lifeguard acted on it: when a fence or an evacuation re-checked the world,
 * the host reported to Nova again (`updated_at` younger than DELTA) or sent heartbeats. Its incident
 * is closed with outcome `recovered` and the host is left alone: no power action, no Nova change.
 */
export const HostRecoveredEvent = z.object({
  ...base,
  type: z.literal('host.recovered'),
  data: z.object({
    host: HostName,
    incidentId: IncidentId,
    /** The gate that saw the host back: `host-down` (Nova reports) or `heartbeat`. */
    gate: z.string().min(1),
    /** The evidence, e.g. `compute-02 reports to Nova: state up, updated_at 2 s ago (DELTA 30 s)`. */
    reason: z.string(),
    /** The action that was about to run: `fence` or `evacuation`. */
    action: z.enum(['fence', 'evacuation']),
  }),
});

/** The fencing driver powered a host back on after its evacuation. */
export const HostPoweredOnEvent = z.object({
  ...base,
  type: z.literal('host.powered-on'),
  data: z.object({ host: HostName, incidentId: IncidentId, method: z.string().min(1) }),
});

/**
 * A host's instances were evacuated but powering it back on failed (its BMC unreachable, say): the
 * incident ends `evacuated`, and a person must power the host on (its re-enable follows once its
 * nova-compute reports again). `reason` is the fencing worker's error.
 */
export const HostPowerOnFailedEvent = z.object({
  ...base,
  type: z.literal('host.power-on.failed'),
  data: z.object({
    host: HostName,
    incidentId: IncidentId,
    evacuatedInstances: z.array(z.string()),
    reason: z.string(),
  }),
});

/**
 * The node monitor found a re-enable candidate (docs/instance-ha-rules.md#re-enable): a host that lifeguard (or InstanceHA)
 * evacuated, or one whose `forced_down` lifeguard set, and asks for the re-enable rules to run.
 */
export const HostRecoveryRequestedEvent = z.object({
  ...base,
  type: z.literal('host.recovery.requested'),
  data: z.object({
    host: HostName,
    serviceId: z.string().min(1),
    incidentId: IncidentId.nullable(),
    fencingToken: z.number().int().nonnegative(),
    status: z.string(),
    state: z.string(),
    forcedDown: z.boolean(),
    disabledReason: z.string().nullable(),
  }),
});

/** A host's compute service was enabled again and `forced_down` lifted. */
export const HostReenabledEvent = z.object({
  ...base,
  type: z.literal('host.reenabled'),
  data: z.object({ host: HostName, serviceId: z.string().min(1), incidentId: IncidentId.nullable() }),
});

/**
 * Nova has refused to lift a host's `forced_down` for `waitingSeconds` (at least
 * LIFEGUARD_REENABLE_WAITING_ALERT_SECONDS): `done` evacuation migrations from it remain until its
 * nova-compute starts again and marks them `completed`. Published once per wait; lifeguard keeps
 * trying. `reason` is Nova's message.
 */
export const HostReenableWaitingEvent = z.object({
  ...base,
  type: z.literal('host.reenable.waiting'),
  data: z.object({
    host: HostName,
    serviceId: z.string().min(1),
    incidentId: IncidentId.nullable(),
    /** Since when Nova refuses, ISO 8601. */
    since: Timestamp,
    waitingSeconds: z.number().nonnegative(),
    reason: z.string(),
  }),
});

/**
 * THRESHOLD (global, docs/instance-ha-rules.md#threshold) or an aggregate's `instanceha:max_failures` (G7) blocked fencing.
 * `percent` is impacted ÷ total × 100; blocking happens when it is strictly greater than `threshold`.
 */
export const ThresholdExceededEvent = z.object({
  ...base,
  type: z.literal('threshold.exceeded'),
  data: z.object({
    scope: z.enum(['global', 'aggregate']),
    aggregate: z.string().nullable(),
    impacted: z.number().int().nonnegative(),
    total: z.number().int().nonnegative(),
    percent: z.number().nonnegative(),
    threshold: z.number().nonnegative(),
    /** The failed hosts of this cycle the gate blocked. */
    hosts: z.array(HostName),
    /**
     * Every host counted in `impacted` (down, forced down, in flight, silent past
     * THRESHOLD_SUSPECT_AGE, and `hosts`): `impacted` is its length. Absent from events of older releases.
     */
    impactedHosts: z.array(HostName).optional(),
  }),
});

/** Admission gates of the node monitor other than THRESHOLD (docs/instance-ha-rules.md#admission-gates). */
export const AdmissionGate = z.enum([
  'heartbeat-cliff',
  'host-reachable',
  'all-services-stale',
  'mass-event-hold-down',
  'not-evacuable',
  'rate-limit',
  'disabled',
  'scheduler-down',
  'kdump-wait',
]);
export type AdmissionGate = z.infer<typeof AdmissionGate>;

/** A gate held back some failed hosts this poll cycle. */
export const AdmissionBlockedEvent = z.object({
  ...base,
  type: z.literal('admission.blocked'),
  data: z.object({ gate: AdmissionGate, hosts: z.array(HostName), reason: z.string() }),
});

/** The write actions an operator can take from the console (each is also a `lifeguard` command). */
export const OperatorActionName = z.enum(['confirm-fenced', 'rehabilitate', 'replay-dead-letter']);
export type OperatorActionName = z.infer<typeof OperatorActionName>;

/**
 * An operator took a write action: who (`operator`, as they named themselves, and `via`, the console
 * instance that ran it), on what (`host` or the dead letter's `target`), and how it ended (`outcome`
 * `done` or `refused`, with `detail` in words). Published after the action ran, refused or not.
 */
export const OperatorActionEvent = z.object({
  ...base,
  type: z.literal('operator.action'),
  data: z.object({
    action: OperatorActionName,
    operator: z.string().min(1),
    via: z.string().min(1),
    host: HostName.nullable(),
    incidentId: IncidentId.nullable(),
    target: z.string().nullable(),
    outcome: z.enum(['done', 'refused']),
    detail: z.string(),
  }),
});

/** Every event lifeguard publishes, discriminated by `type`. */
export const LifeguardEvent = z.discriminatedUnion('type', [
  ProvisioningCompleteEvent,
  PortStatusChangedEvent,
  PortVifPluggedEvent,
  HostDownEvent,
  HostFencedEvent,
  HostFencingFailedEvent,
  HostEvacuationStartedEvent,
  HostEvacuatedEvent,
  HostEvacuationFailedEvent,
  InstanceEvacuatedEvent,
  InstanceEvacuationFailedEvent,
  InstanceEvacuationSkippedEvent,
  HostPoweredOnEvent,
  HostPowerOnFailedEvent,
  HostRecoveredEvent,
  HostCapacityInsufficientEvent,
  HostRecoveryRequestedEvent,
  HostReenabledEvent,
  HostReenableWaitingEvent,
  ThresholdExceededEvent,
  AdmissionBlockedEvent,
  OperatorActionEvent,
  RedisMemoryLostEvent,
  HostNetworkSilentEvent,
  HostNetworkHeardEvent,
  HostProcessStoppedEvent,
  HostProcessRunningEvent,
  HostAgentSilentEvent,
  HostComputeServiceDisabledEvent,
  HostComputeServiceEnabledEvent,
  InstanceRestartStartedEvent,
  InstanceRestartCompletedEvent,
  InstanceRestartFailedEvent,
  InstanceRestartGivenUpEvent,
]);
export type LifeguardEvent = z.output<typeof LifeguardEvent>;
export type LifeguardEventType = LifeguardEvent['type'];
/** The type of every event lifeguard publishes (`host.down`, `admission.blocked`, ...), in schema order. */
export const LIFEGUARD_EVENT_TYPES: ReadonlyArray<LifeguardEventType> = LifeguardEvent.options.map(
  (schema) => schema.shape.type.value,
);
/** The event of a given type, e.g. `EventOf<'host.down'>`. */
export type EventOf<Type extends LifeguardEventType> = Extract<LifeguardEvent, { type: Type }>;
/** The `data` of an event of a given type. */
export type EventData<Type extends LifeguardEventType> = EventOf<Type>['data'];

/**
 * The AMQP routing key of an event on the events exchange: its type, except provisioning completion,
 * which is `provisioning.complete.<objectType>` (e.g. `provisioning.complete.port`).
 */
export function eventRoutingKey(event: LifeguardEvent): string {
  return event.type === 'provisioning.complete'
    ? `provisioning.complete.${event.data.objectType}`
    : event.type;
}

/** The incident an event belongs to (its `data.incidentId`), or null for events outside incidents. */
export function eventIncidentId(event: LifeguardEvent): string | null {
  const data = event.data as { incidentId?: string | null };
  return data.incidentId ?? null;
}
