import type { RedisClient } from '@lifeguard/runtime';
import { redisKey } from '@lifeguard/runtime';
import type { z } from 'zod';
import { AdmissionSummary, FailedPoll } from './admission-summary.ts';

/**
 * What the node-monitor leader's polls leave for the operator tools, each JSON with a TTL:
 * `<prefix>:instance-ha:admission:last-cycle`, the last good poll's summary, and
 * `<prefix>:instance-ha:admission:last-failed-poll`, its last failed poll.
 */
export class AdmissionSummaryStore {
  private readonly key: string;
  private readonly failedKey: string;

  constructor(
    private readonly redis: RedisClient,
    keyPrefix: string,
  ) {
    this.key = redisKey(keyPrefix, 'instance-ha', 'admission', 'last-cycle');
    this.failedKey = redisKey(keyPrefix, 'instance-ha', 'admission', 'last-failed-poll');
  }

  /** Writes the summary, kept `ttlSeconds` (a few polls: a monitor that stopped polling lets it go). */
  write(summary: AdmissionSummary, ttlSeconds: number): Promise<void> {
    return this.put(this.key, summary, ttlSeconds);
  }

  /**
   * The last summary, or null when none is kept.
   * @throws Error naming the key when what is kept is not a summary
   */
  read(): Promise<AdmissionSummary | null> {
    return this.take(this.key, AdmissionSummary, 'an admission summary');
  }

  /** Records a failed poll, kept `ttlSeconds`; a good poll's summary written later supersedes it. */
  writeFailure(failure: FailedPoll, ttlSeconds: number): Promise<void> {
    return this.put(this.failedKey, failure, ttlSeconds);
  }

  /**
   * The last failed poll, or null when none is kept.
   * @throws Error naming the key when what is kept is not a failed poll
   */
  readFailure(): Promise<FailedPoll | null> {
    return this.take(this.failedKey, FailedPoll, 'a failed poll');
  }

  private async put(key: string, value: unknown, ttlSeconds: number): Promise<void> {
    await this.redis.set(key, JSON.stringify(value), 'EX', Math.max(1, Math.ceil(ttlSeconds)));
  }

  private async take<Schema extends z.ZodType>(
    key: string,
    schema: Schema,
    what: string,
  ): Promise<z.output<Schema> | null> {
    const text = await this.redis.get(key);
    if (text === null) return null;
    const parsed = schema.safeParse(JSON.parse(text));
    if (!parsed.success) throw new Error(`${key} does not hold ${what}: ${parsed.error.message}`);
    return parsed.data;
  }
}
