import type { JobsOptions } from 'bullmq';

/** Options of every `evacuate-instance` child: the failure policy keeps the parent from waiting forever. */
export const INSTANCE_JOB_OPTIONS: JobsOptions = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 5_000 },
  // A failed child is recorded on the parent (getIgnoredChildrenFailures) and the parent goes on
  // once every child ended: it never stays in waiting-children (docs/design.md#parent-and-child-jobs).
  ignoreDependencyOnFailure: true,
  removeOnComplete: { age: 7 * 24 * 3600, count: 100_000 },
  removeOnFail: { age: 30 * 24 * 3600 },
};

/** Options of the `power-on` child added to the fencing queue (the fencing worker holds the BMC credentials). */
export const POWER_ON_JOB_OPTIONS: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 10_000 },
  ignoreDependencyOnFailure: true,
  removeOnComplete: { age: 7 * 24 * 3600 },
  removeOnFail: { age: 30 * 24 * 3600 },
};
