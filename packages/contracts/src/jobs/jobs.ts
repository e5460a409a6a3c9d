import { z } from 'zod';
import { EvacuationMode, FenceProof } from '../events/events.ts';
import { HostName, IncidentId, Timestamp } from '../events/identifiers.ts';

/**
 * Data of a `fence` job on the `fencing` queue. No secret ever travels in job data (it is stored in
 * clear in Redis): the worker resolves the host's fencing methods from its own fencing.yaml.
 */
export const FencingJobData = z.object({
  host: HostName,
  serviceId: z.string().min(1),
  incidentId: IncidentId,
  fencingToken: z.number().int().nonnegative(),
  kdumpFenced: z.boolean(),
  resume: z.boolean(),
  detectedAt: Timestamp,
});
export type FencingJobData = z.infer<typeof FencingJobData>;

/** Result of a `fence` job: how the host was fenced and which evacuation job it was handed to. */
export const FencingJobResult = z.object({
  host: HostName,
  incidentId: IncidentId,
  proof: FenceProof,
  method: z.string().min(1),
  evacuationJobId: z.string().min(1),
});
export type FencingJobResult = z.infer<typeof FencingJobResult>;

/** Data of a `power-on` job on the `fencing` queue (after a successful evacuation). */
export const PowerOnJobData = z.object({ host: HostName, incidentId: IncidentId });
export type PowerOnJobData = z.infer<typeof PowerOnJobData>;

/** Data of the parent `evacuate-host` job of a host's evacuation flow (`evacuation` queue). */
export const EvacuateHostJobData = z.object({
  host: HostName,
  serviceId: z.string().min(1),
  incidentId: IncidentId,
  kdumpFenced: z.boolean(),
  resume: z.boolean(),
  fencedAt: Timestamp,
});
export type EvacuateHostJobData = z.infer<typeof EvacuateHostJobData>;

export const EvacuateHostJobResult = z.object({
  host: HostName,
  incidentId: IncidentId,
  outcome: z.enum(['evacuated', 'nothing-to-evacuate', 'failed']),
  mode: EvacuationMode,
  evacuatedInstances: z.array(z.string()),
  failedInstances: z.array(z.string()),
  reservedHost: HostName.nullable(),
});
export type EvacuateHostJobResult = z.infer<typeof EvacuateHostJobResult>;

/**
 * How an instance's evacuate requests use the job's `targetHost` (a reserved host):
 * - `first-attempt`: the first request goes to it; a refusal (409/500) is sent again at once without
 *   it, and later attempts go to Nova's scheduler (FORCE_RESERVED_HOST_EVACUATION);
 * - `then-scheduler`: the same, and a first attempt that ended in NoValidHost is tried again through
 *   the scheduler (a Masakari segment's `rh_priority`);
 * - `every-attempt`: every request goes to it, never without it (`reserved_host`);
 * - `after-scheduler`: the first request goes to the scheduler, later attempts to it, its compute
 *   service enabled first (`auto_priority`).
 */
export const TargetHostUse = z.enum(['first-attempt', 'then-scheduler', 'every-attempt', 'after-scheduler']);
export type TargetHostUse = z.infer<typeof TargetHostUse>;

/** Data of one `evacuate-instance` child job (`evacuation-instance` queue). */
export const EvacuateInstanceJobData = z.object({
  host: HostName,
  incidentId: IncidentId,
  instanceId: z.string().min(1),
  instanceName: z.string(),
  /** The server's status before evacuation (ACTIVE, SHUTOFF, ERROR, REBUILD when resuming). */
  originalStatus: z.string(),
  /**
   * A reserved host to send as the evacuate `host`: with FORCE_RESERVED_HOST_EVACUATION, or the
   * reserved host of the failed host's Masakari segment.
   */
  targetHost: HostName.nullable(),
  /** How the requests use `targetHost` (TargetHostUse); absent in jobs added before it existed. */
  targetHostUse: TargetHostUse.default('first-attempt'),
  resume: z.boolean(),
  /** Orchestrated-restart phase index (0 = first), or 0 in smart/traditional mode. */
  phase: z.number().int().nonnegative(),
});
export type EvacuateInstanceJobData = z.infer<typeof EvacuateInstanceJobData>;

/**
 * Result of an `evacuate-instance` child job:
 * - `evacuated`: the instance runs on another host (SMART_EVACUATION / ORCHESTRATED_RESTART: the
 *   evacuation migration reached `done` or `completed` and the original state was restored);
 * - `already-evacuated`: a retried or resumed job found it already on another host (no evacuate sent);
 * - `accepted`: traditional mode, Nova accepted the evacuate (the host job verifies it afterwards);
 * - `skipped`: not attempted because the host's evacuation had already stopped on a failed instance;
 * - `deleted`: the server no longer exists.
 */
export const EvacuateInstanceJobResult = z.object({
  instanceId: z.string().min(1),
  outcome: z.enum(['evacuated', 'already-evacuated', 'accepted', 'skipped', 'deleted']),
  targetHost: z.string().nullable(),
  migrationStatus: z.string().nullable(),
  attempts: z.number().int().nonnegative(),
  novaRequestId: z.string().nullable(),
});
export type EvacuateInstanceJobResult = z.infer<typeof EvacuateInstanceJobResult>;

/** Data of a `reenable` job (`recovery` queue): run the re-enable rules (docs/instance-ha-rules.md#re-enable) for a host. */
export const ReenableJobData = z.object({
  host: HostName,
  serviceId: z.string().min(1),
  incidentId: IncidentId.nullable(),
  disabledReason: z.string().nullable(),
  requestedAt: Timestamp,
});
export type ReenableJobData = z.infer<typeof ReenableJobData>;
