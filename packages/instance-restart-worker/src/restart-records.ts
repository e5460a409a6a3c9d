import { type RedisClient, redisKey } from '@lifeguard/runtime';

/** How long a restart's progress and an instance's restart history are kept. */
export const RECORD_TTL_SECONDS = 7 * 86_400;
/** Restarts older than this are dropped from an instance's history (the rule looks back an hour). */
const HISTORY_KEPT_MILLISECONDS = 86_400_000;

/** Where one job's own restart stands: `began` (recorded before the first Nova call), `start-sent`. */
export type RestartProgress = 'began' | 'start-sent';

/**
 * What the instance restart worker keeps in Redis, so that a retried, redelivered or taken-over job
 * knows what it already did:
 * - `<prefix>:instance-restart:progress:<job id>`: the job's own progress;
 * - `<prefix>:instance-restart:history:<instance>`: a sorted set of the instance's restarts (member:
 *   the job id, score: when its restart began), which the per-hour bound and "once per failure" read.
 * Each write is one command on one key (Redis Cluster safe), and writing the same value again is harmless.
 */
export class RestartRecords {
  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {}

  private progressKey(jobId: string): string {
    return redisKey(this.keyPrefix, 'instance-restart', 'progress', jobId);
  }

  private historyKey(instanceId: string): string {
    return redisKey(this.keyPrefix, 'instance-restart', 'history', instanceId);
  }

  async progress(jobId: string): Promise<RestartProgress | null> {
    const value = await this.redis.get(this.progressKey(jobId));
    return value === 'began' || value === 'start-sent' ? value : null;
  }

  async setProgress(jobId: string, progress: RestartProgress): Promise<void> {
    await this.redis.set(this.progressKey(jobId), progress, 'EX', RECORD_TTL_SECONDS);
  }

  /** When restarts of the instance by jobs other than `exceptJobId` began, oldest first. */
  async otherRestarts(instanceId: string, exceptJobId: string): Promise<Date[]> {
    const flat = await this.redis.zrange(this.historyKey(instanceId), 0, -1, 'WITHSCORES');
    const began: Date[] = [];
    for (let index = 0; index + 1 < flat.length; index += 2) {
      if (flat[index] !== exceptJobId) began.push(new Date(Number(flat[index + 1])));
    }
    return began;
  }

  /** Records that the job's restart began at `at` (kept at its first time when recorded again). */
  async recordRestart(instanceId: string, jobId: string, at: Date): Promise<void> {
    const key = this.historyKey(instanceId);
    await this.redis.zadd(key, 'NX', at.getTime(), jobId);
    await this.redis.zremrangebyscore(key, '-inf', at.getTime() - HISTORY_KEPT_MILLISECONDS);
    await this.redis.expire(key, RECORD_TTL_SECONDS);
  }
}
