import { z } from 'zod';
import { HostName, Timestamp } from '../events/identifiers.ts';

/**
 * Where an instance failure was reported from: a Masakari `VM` notification accepted by the
 * masakari-api worker (sent by a masakari-instancemonitor or `openstack notification create`), or
 * lifeguard's own instance monitor reading libvirt's domain events on the compute host.
 */
export const InstanceFailureSource = z.enum(['masakari-notification', 'instance-monitor']);
export type InstanceFailureSource = z.infer<typeof InstanceFailureSource>;

/**
 * The failure as reported. `event` is Masakari's payload `event` (`LIFECYCLE`, `IO_ERROR`,
 * `REBOOT`, `QEMU_GUEST_AGENT_ERROR`, ...); `virDomainEvent` is Masakari's payload
 * `vir_domain_event` (`STOPPED_FAILED`, `STOPPED_CRASHED`, ...) or null when the event has none.
 */
export const InstanceFailure = z.object({
  source: InstanceFailureSource,
  event: z.string().min(1),
  virDomainEvent: z.string().min(1).nullable(),
});
export type InstanceFailure = z.infer<typeof InstanceFailure>;

/**
 * Data of an `instance-restart` job on the `instance-restart` queue: one instance's failure, to be
 * judged by the instance restart rule and, when it acts, the guest restarted through Nova.
 * `notificationUuid` is the Masakari notification's uuid when the failure came from one (its status
 * is then kept by the masakari engine), null for lifeguard's own instance monitor.
 */
export const InstanceRestartJob = z.object({
  /** The Nova server's uuid. */
  instanceId: z.string().min(1),
  /** The compute host the failure was reported from. */
  host: HostName,
  failure: InstanceFailure,
  notificationUuid: z.string().min(1).nullable(),
  /** When the failure was observed (Masakari's `generated_time`, or the monitor's reading time). */
  observedAt: Timestamp,
});
export type InstanceRestartJob = z.infer<typeof InstanceRestartJob>;

/**
 * The return value of an `instance-restart` job:
 * - `restarted`: the guest is ACTIVE again after this job's restart (or after an earlier attempt of
 *   the same job: a redelivered job never restarts twice);
 * - `ignored`: not acted on, by the rule (event Masakari does not act on, HA_Enabled not set, host
 *   down or under an open incident, server gone, failure already handled...);
 * - `given-up`: the instance was restarted too often within the hour; an alert was raised;
 * - `failed`: the restart was attempted and did not bring the guest back to ACTIVE.
 * `reason` says why, in words.
 */
export const InstanceRestartOutcome = z.object({
  outcome: z.enum(['restarted', 'ignored', 'given-up', 'failed']),
  reason: z.string(),
});
export type InstanceRestartOutcome = z.infer<typeof InstanceRestartOutcome>;

/**
 * The BullMQ options every producer of an `instance-restart` job gives (with the job id from
 * instanceRestartJobId): Nova or Redis unreachable is retried 5 times, 2 s doubling, and finished
 * jobs are kept a day so that a repeated report of the same failure collapses onto its job.
 */
export const INSTANCE_RESTART_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 2000 },
  removeOnComplete: { age: 86_400 },
  removeOnFail: { age: 7 * 86_400 },
} as const;
