import { fencingJobId, JOB_QUEUES } from '@lifeguard/contracts';
import { bullmqPrefix, type RedisClient } from '@lifeguard/runtime';
import { type Job, Queue } from 'bullmq';

/** An incident's fence job as BullMQ holds it: what the advice on a failing fence is decided from. */
export interface FenceJobView {
  /** BullMQ's state of the job (`delayed` between attempts, `failed` once the attempts are spent). */
  readonly state: string;
  /** Attempts made so far, and allowed in all. */
  readonly attemptsMade: number;
  readonly attempts: number;
  /** When a `delayed` job's next attempt is due (ISO 8601), else null. */
  readonly retryAt: string | null;
  /** For an `active` job: whether the worker running it still holds its lock (false: it stopped, and the job waits to be taken over). */
  readonly lockHeld: boolean | null;
}

/**
 * Reads the incident's fence job (`fencingJobId(host, incidentId)` in the `fencing` queue), or null
 * when there is none (never queued, or removed). A delayed job's due time is its score in BullMQ's
 * delayed set (milliseconds × 4096 plus a counter, BullMQ's layout since version 5). The job and its
 * state are read so that they agree (a worker failing the attempt in between moved it on).
 */
export async function readFenceJob(
  redis: RedisClient,
  keyPrefix: string,
  host: string,
  incidentId: string,
): Promise<FenceJobView | null> {
  const queue = new Queue(JOB_QUEUES.fencing, { connection: redis, prefix: bullmqPrefix(keyPrefix) });
  try {
    const id = fencingJobId(host, incidentId);
    const read = await consistentRead(queue, id);
    if (read === null) return null;
    const { job, state } = read;
    const score = state === 'delayed' ? await redis.zscore(queue.keys.delayed!, id) : null;
    const lock = state === 'active' ? await redis.exists(`${queue.toKey(id)}:lock`) : null;
    return {
      state,
      attemptsMade: job.attemptsMade,
      attempts: job.opts.attempts ?? 1,
      retryAt: score === null ? null : new Date(Math.floor(Number(score) / 0x1000)).toISOString(),
      lockHeld: lock === null ? null : lock === 1,
    };
  } finally {
    await queue.close();
  }
}

/**
 * The job and its state as of one moment: the state is read before and after the job, and the pair
 * read again while a worker moved the job in between (an attempt failing between the reads gave a
 * `delayed` job with the attempt not counted). After five tries the last read is taken.
 */
async function consistentRead(queue: Queue, id: string): Promise<{ job: Job; state: string } | null> {
  for (let tries = 1; ; tries++) {
    const before = await queue.getJobState(id);
    const job = await queue.getJob(id);
    if (!job) return null;
    const state = await job.getState();
    if (state === before || tries === 5) return { job, state };
  }
}
