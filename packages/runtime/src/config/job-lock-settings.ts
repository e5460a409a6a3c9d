import { z } from 'zod';
import { ConfigError } from '../errors.ts';
import type { ConfigSource } from './parse-config.ts';

/**
 * The BullMQ job-lock settings of every worker that runs jobs (fencing worker, evacuation worker),
 * under the same names in each. A job whose process died keeps its lock for
 * LIFEGUARD_JOB_LOCK_SECONDS; another process takes it over at its next stalled-job check (every
 * LIFEGUARD_JOB_STALLED_CHECK_SECONDS), at most LIFEGUARD_JOB_MAX_STALLED_COUNT times before the job
 * fails (BullMQ's lockDuration, stalledInterval and maxStalledCount). Every takeover re-checks the
 * world before it acts (docs/safety-rules.md).
 *
 *     z.object({ ...jobLockSettingsShape, ... })
 */
export const jobLockSettingsShape = {
  LIFEGUARD_JOB_LOCK_SECONDS: z.coerce.number().min(1).max(600).default(30),
  LIFEGUARD_JOB_STALLED_CHECK_SECONDS: z.coerce.number().min(0.5).max(600).default(30),
  /** Absent: the worker's own default (each kind of job tolerates a different number of takeovers). */
  LIFEGUARD_JOB_MAX_STALLED_COUNT: z.coerce.number().int().min(0).max(100).optional(),
};

/** The BullMQ Worker options the job-lock settings give. */
export interface JobLockOptions {
  /** Milliseconds. */
  readonly lockDuration: number;
  /** Milliseconds. */
  readonly stalledInterval: number;
  readonly maxStalledCount: number;
}

/** BullMQ Worker options from parsed job-lock settings; `defaultMaxStalledCount` when none is set. */
export function jobLockOptions(
  settings: {
    readonly LIFEGUARD_JOB_LOCK_SECONDS: number;
    readonly LIFEGUARD_JOB_STALLED_CHECK_SECONDS: number;
    readonly LIFEGUARD_JOB_MAX_STALLED_COUNT?: number | undefined;
  },
  defaultMaxStalledCount: number,
): JobLockOptions {
  return {
    lockDuration: Math.round(settings.LIFEGUARD_JOB_LOCK_SECONDS * 1000),
    stalledInterval: Math.round(settings.LIFEGUARD_JOB_STALLED_CHECK_SECONDS * 1000),
    maxStalledCount: settings.LIFEGUARD_JOB_MAX_STALLED_COUNT ?? defaultMaxStalledCount,
  };
}

/** Settings that had another name in earlier releases, and the name (and unit) that replaced them. */
export const RENAMED_SETTINGS: Readonly<Record<string, string>> = {
  LIFEGUARD_FENCING_LOCK_SECONDS: 'LIFEGUARD_JOB_LOCK_SECONDS',
  LIFEGUARD_FENCING_STALLED_CHECK_SECONDS: 'LIFEGUARD_JOB_STALLED_CHECK_SECONDS',
  LIFEGUARD_FENCING_MAX_STALLED_COUNT: 'LIFEGUARD_JOB_MAX_STALLED_COUNT',
  LIFEGUARD_JOB_LOCK_MILLISECONDS: 'LIFEGUARD_JOB_LOCK_SECONDS (in seconds)',
  LIFEGUARD_JOB_STALLED_INTERVAL_MILLISECONDS: 'LIFEGUARD_JOB_STALLED_CHECK_SECONDS (in seconds)',
};

/**
 * Refuses a setting given under a name that was replaced, so that a value is never ignored in
 * silence (an operator's lock time of 120 s falling back to 30 s).
 * @throws ConfigError naming each old key, its source, and the key to use instead
 */
export function refuseRenamedSettings(sources: ReadonlyArray<ConfigSource>): void {
  const problems = sources.flatMap((source) =>
    Object.entries(source.values)
      .filter(([key, value]) => Object.hasOwn(RENAMED_SETTINGS, key) && value !== undefined && value !== '')
      .map(([key]) => ({
        key,
        source: source.name,
        problem: `renamed: set ${RENAMED_SETTINGS[key]} instead`,
        value: null,
      })),
  );
  if (problems.length > 0) throw new ConfigError(problems);
}
