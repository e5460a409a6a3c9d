import { HostName, TargetHostUse } from '@lifeguard/contracts';
import { z } from 'zod';

/** One instance of a host's evacuation plan. */
export const PlannedInstance = z.object({
  id: z.string().min(1),
  name: z.string(),
  /** Status when planned: ACTIVE, SHUTOFF, ERROR (REBUILD when resuming). */
  status: z.string(),
  /** Phase index, 0 first. */
  phase: z.number().int().nonnegative(),
  /** The phase's restart priority (ORCHESTRATED_RESTART), 500 otherwise. */
  priority: z.number().int(),
});
export type PlannedInstance = z.infer<typeof PlannedInstance>;

/**
 * A traditional-mode instance still being verified: when it was first seen idle on another host
 * (ISO 8601; restoring its status gets RESTORE_GRACE_SECONDS from then), and its consecutive reads
 * that failed (MAX_CONSECUTIVE_API_ERRORS of them fail it).
 */
export const VerifyingInstance = z.object({
  landedAt: z.string().nullable().default(null),
  readErrors: z.number().int().nonnegative().default(0),
});
export type VerifyingInstance = z.infer<typeof VerifyingInstance>;

/** The steps of a host's evacuation job, in order. */
export const HostStep = z.enum([
  'check',
  'plan',
  'delay',
  'phase',
  'verify',
  'power-on',
  'complete',
  'fail',
  'done',
]);
export type HostStep = z.infer<typeof HostStep>;

/**
 * The progress of a host's evacuation, kept in the host job's data (`evacuation`) so that a job that
 * resumes on another worker process (after a crash, a stall, or each time its children finish)
 * continues where it stopped: the plan is made once, children are added once per phase, waits are
 * absolute times.
 */
export const HostEvacuationState = z.object({
  step: HostStep,
  /** When this worker first took the job (ISO 8601); host durations count from here. */
  startedAt: z.string(),
  /** The compute service's id as Nova lists it (found by the safety check). */
  serviceId: z.string().nullable().default(null),
  plan: z.array(PlannedInstance).default([]),
  phaseCount: z.number().int().nonnegative().default(0),
  phaseIndex: z.number().int().nonnegative().default(0),
  /** The current phase's children were added. */
  phaseAdded: z.boolean().default(false),
  /** The claimed reserved host and whether this evacuation enabled it. */
  reservedHost: HostName.nullable().default(null),
  reservedHostEnabled: z.boolean().default(false),
  /**
   * The instance jobs' evacuate target and how they use it (HostPlacement); null in a job planned
   * before it was kept here (FORCE_RESERVED_HOST_EVACUATION then decides).
   */
  placement: z
    .object({ targetHost: HostName.nullable(), targetHostUse: TargetHostUse })
    .nullable()
    .default(null),
  /** DELAY ends at this time (ISO 8601). */
  delayUntil: z.string().nullable().default(null),
  /** Verification began at this time (ISO 8601); EVACUATION_TIMEOUT bounds it. */
  verifyStartedAt: z.string().nullable().default(null),
  /** Instances being verified but not settled yet, by id. */
  verifying: z.record(z.string(), VerifyingInstance).default({}),
  /** Instances verified as settled on another host. */
  verified: z.array(z.string()).default([]),
  /** Planned instances deleted meanwhile (neither evacuated nor failed). */
  deleted: z.array(z.string()).default([]),
  /** Instances whose evacuation failed, and why (children, verification or power-on). */
  failures: z.record(z.string(), z.string()).default({}),
  /** Why the host failed, when it did. */
  failureReason: z.string().nullable().default(null),
  powerOnAdded: z.boolean().default(false),
  poweredOn: z.boolean().default(false),
  /** Consecutive unexpected errors (Nova or Redis unreachable) retried with back-off. */
  transientFailures: z.number().int().nonnegative().default(0),
  /** The job's result once finished. */
  result: z.unknown().nullable().default(null),
});
export type HostEvacuationState = z.infer<typeof HostEvacuationState>;
