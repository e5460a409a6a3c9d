import type { EvacuationMode } from '@lifeguard/contracts';
import { type InstanceHaConfig, perHostEvacuationConcurrency } from '@lifeguard/instance-ha';
import {
  booleanSetting,
  type ConfigSource,
  environmentSource,
  type JobLockOptions,
  jobLockOptions,
  jobLockSettingsShape,
  parseConfig,
  refuseRenamedSettings,
} from '@lifeguard/runtime';
import { z } from 'zod';
import { type EvacuationPolicy, evacuationPolicy } from './policy/evacuation-policy.ts';

export { evacuationMode } from './policy/evacuation-policy.ts';

/**
 * Takeovers of one evacuation job before it fails: a job whose process died twice is more likely
 * killing its process than unlucky (each takeover re-checks the host before it acts).
 */
export const EVACUATION_MAX_STALLED_COUNT = 2;

/** The parts of the worker a process runs: host parents, instance children, re-enable jobs. */
export const WORKER_ROLES = ['hosts', 'instances', 'recovery'] as const;
export type WorkerRole = (typeof WORKER_ROLES)[number];

/**
 * The evacuation worker's own environment variables (InstanceHA's keys come from config.yaml, see
 * loadInstanceHaConfig). Durations carry their unit in the name; fractions of a second are allowed
 * where a test or benchmark needs them.
 */
export const evacuationWorkerSettingsSchema = z.object({
  /** Comma list of roles this process runs (default all): `hosts`, `instances`, `recovery`. */
  LIFEGUARD_EVACUATION_ROLES: z
    .string()
    .default(WORKER_ROLES.join(','))
    .transform((value, context) => {
      const roles = value
        .split(',')
        .map((role) => role.trim())
        .filter((role) => role !== '');
      for (const role of roles) {
        if (!(WORKER_ROLES as ReadonlyArray<string>).includes(role)) {
          context.addIssue({
            code: 'custom',
            message: `unknown role "${role}"; roles: ${WORKER_ROLES.join(', ')}`,
          });
        }
      }
      if (roles.length === 0) context.addIssue({ code: 'custom', message: 'at least one role is needed' });
      return [...new Set(roles)] as WorkerRole[];
    }),
  /** Wait after an accepted evacuate before the first look at its migration, in seconds (InstanceHA: 10). */
  LIFEGUARD_EVACUATION_FIRST_CHECK_SECONDS: z.coerce.number().min(0).max(600).default(10),
  /** Wait between two looks at an evacuation (and between verifications), in seconds (InstanceHA: 5). */
  LIFEGUARD_EVACUATION_POLL_SECONDS: z.coerce.number().min(0.01).max(300).default(5),
  /** Re-check the global THRESHOLD before evacuating a host (default true). */
  LIFEGUARD_EVACUATION_THRESHOLD_CHECK: booleanSetting.default(true),
  /**
   * Seconds before a deferred host evacuation (THRESHOLD exceeded, DISABLED) or a re-enable that must
   * wait is looked at again; default POLL.
   */
  LIFEGUARD_EVACUATION_RECHECK_SECONDS: z.coerce.number().min(0.1).max(3600).optional(),
  /**
   * Seconds Nova may refuse to lift a host's `forced_down` (400: `done` evacuation migrations remain
   * until its nova-compute restarts) before lifeguard says so: a warning, `host.reenable.waiting`,
   * `lifeguard_hosts_waiting_for_nova_compute_restart`, and `lifeguard status` / `hosts`.
   */
  LIFEGUARD_REENABLE_WAITING_ALERT_SECONDS: z.coerce.number().min(0).max(86_400).default(300),
  /**
   * Seconds an instance's evacuate claim outlives its holder's last take: while it lasts no other run
   * of the instance's job sends an evacuate. It must be longer than an evacuate request can take to
   * reach Nova once sent (the Nova client's attempts of clouds.yaml `api_timeout`, 30 s by default,
   * and their back-offs); a run that finds the claim of a run that died before its request waits
   * this long at most.
   */
  LIFEGUARD_EVACUATE_CLAIM_SECONDS: z.coerce.number().min(1).max(3600).default(180),
  /** BullMQ job lock, stalled-job check and takeovers: the same settings as the fencing worker's. */
  ...jobLockSettingsShape,
});
export type EvacuationWorkerEnvironment = z.output<typeof evacuationWorkerSettingsSchema>;

/** Everything the worker needs to know, InstanceHA's keys and lifeguard's together. */
export interface EvacuationWorkerSettings {
  readonly roles: ReadonlyArray<WorkerRole>;
  /** The policy's mode (events and logs name it). */
  readonly mode: EvacuationMode;
  /** What SMART_EVACUATION, ORCHESTRATED_RESTART, EVACUATION_RETRIES and EVACUATION_TIMEOUT decide. */
  readonly policy: EvacuationPolicy;
  /** BullMQ concurrency of host parent jobs in this process: WORKERS. */
  readonly hostConcurrency: number;
  /** BullMQ concurrency of instance child jobs in this process: EVACUATION_MAX_THREADS. */
  readonly instanceConcurrency: number;
  /** BullMQ concurrency of re-enable jobs in this process: WORKERS. */
  readonly recoveryConcurrency: number;
  /** InstanceHA's per-host share, max(1, EVACUATION_MAX_THREADS ÷ WORKERS) — informational (see docs). */
  readonly perHostConcurrency: number;
  readonly firstCheckMilliseconds: number;
  readonly pollMilliseconds: number;
  readonly thresholdCheck: boolean;
  readonly recheckMilliseconds: number;
  /** LIFEGUARD_REENABLE_WAITING_ALERT_SECONDS, in seconds. */
  readonly reenableWaitingAlertSeconds: number;
  /** BullMQ lockDuration, stalledInterval (milliseconds) and maxStalledCount of every job worker. */
  readonly jobLock: JobLockOptions;
  /** LIFEGUARD_EVACUATE_CLAIM_SECONDS, in milliseconds: an evacuate claim's lifetime after its last take. */
  readonly evacuateClaimMilliseconds: number;
}

/**
 * Reads the worker's own environment variables.
 * @throws ConfigError naming each invalid variable
 */
export function loadEvacuationWorkerEnvironment(
  sources: ReadonlyArray<ConfigSource> = [environmentSource()],
): EvacuationWorkerEnvironment {
  refuseRenamedSettings(sources);
  return parseConfig(evacuationWorkerSettingsSchema, sources);
}

/**
 * Reads the worker's environment variables (or takes them already read) and derives the concurrency of
 * each BullMQ worker from InstanceHA's keys.
 * @throws ConfigError naming each invalid variable
 */
export function loadEvacuationWorkerSettings(
  config: InstanceHaConfig,
  sources: ReadonlyArray<ConfigSource> | EvacuationWorkerEnvironment = [environmentSource()],
): EvacuationWorkerSettings {
  const env = Array.isArray(sources)
    ? loadEvacuationWorkerEnvironment(sources)
    : (sources as EvacuationWorkerEnvironment);
  const policy = evacuationPolicy(config);
  return {
    roles: env.LIFEGUARD_EVACUATION_ROLES,
    mode: policy.mode,
    policy,
    hostConcurrency: config.workers,
    instanceConcurrency: config.evacuationMaxThreads,
    recoveryConcurrency: config.workers,
    perHostConcurrency: perHostEvacuationConcurrency(config),
    firstCheckMilliseconds: Math.round(env.LIFEGUARD_EVACUATION_FIRST_CHECK_SECONDS * 1000),
    pollMilliseconds: Math.round(env.LIFEGUARD_EVACUATION_POLL_SECONDS * 1000),
    thresholdCheck: env.LIFEGUARD_EVACUATION_THRESHOLD_CHECK,
    recheckMilliseconds: Math.round((env.LIFEGUARD_EVACUATION_RECHECK_SECONDS ?? config.pollSeconds) * 1000),
    reenableWaitingAlertSeconds: env.LIFEGUARD_REENABLE_WAITING_ALERT_SECONDS,
    jobLock: jobLockOptions(env, EVACUATION_MAX_STALLED_COUNT),
    evacuateClaimMilliseconds: Math.round(env.LIFEGUARD_EVACUATE_CLAIM_SECONDS * 1000),
  };
}
