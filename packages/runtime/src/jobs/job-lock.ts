import type { Job } from 'bullmq';

/**
 * This run of a BullMQ job no longer holds the job's lock: the lock lapsed (the process stalled or
 * could not reach Redis for longer than the lock's duration) and BullMQ may have handed the job to
 * another run. The run must stop before its next side effect; the other run carries the job on.
 */
export class JobLockLostError extends Error {
  constructor(readonly jobId: string) {
    super(`job ${jobId}: its lock lapsed and another run may hold the job; stopping before any effect`);
    this.name = 'JobLockLostError';
  }
}

/**
 * Checks that this run (`token`, as BullMQ hands it to the processor) still holds the job's lock, and
 * extends the lock by `lockMilliseconds` when it does: one atomic step in Redis (BullMQ's
 * `extendLock`). A run given no token (a job processed by hand, outside a Worker) holds no lock to
 * check.
 * @throws JobLockLostError when the lock is held by another run or by none
 */
export async function assertJobLock(
  job: Pick<Job, 'id' | 'extendLock'>,
  token: string | undefined,
  lockMilliseconds: number,
): Promise<void> {
  if (token === undefined) return;
  if ((await job.extendLock(token, lockMilliseconds)) !== 1) throw new JobLockLostError(job.id ?? 'unknown');
}
