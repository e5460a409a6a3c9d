import type { RedisClient } from '@lifeguard/runtime';
import { redisKey } from '@lifeguard/runtime';
import { AdmissionSummary, FailedPoll } from './admission-summary.ts';

/** The leader's last admission summary: `<prefix>:instance-ha:admission:last-cycle` (JSON, with a TTL). */
export class AdmissionSummaryStore {
  private readonly key: string;
  /** `<prefix>:instance-ha:admission:last-failed-poll`: the leader's last failed poll (JSON, with a TTL). */
  private readonly failedKey: string;

  constructor(
    private readonly redis: RedisClient,
    keyPrefix: string,
  ) {
    this.key = redisKey(keyPrefix, 'instance-ha', 'admission', 'last-cycle');
    this.failedKey = redisKey(keyPrefix, 'instance-ha', 'admission', 'last-failed-poll');
  }

  /** Records a failed poll, kept `ttlSeconds`; a good poll's summary written later supersedes it. */
  async writeFailure(failure: FailedPoll, ttlSeconds: number): Promise<void> {
    await this.redis.set(this.failedKey, JSON.stringify(failure), 'EX', Math.max(1, Math.ceil(ttlSeconds)));
  }

  /**
   * The last failed poll, or null when none is kept.
   * @throws Error naming the key when what is kept is not a failed poll
   */
  async readFailure(): Promise<FailedPoll | null> {
    const text = await this.redis.get(this.failedKey);
    if (text === null) return null;
    const parsed = FailedPoll.safeParse(JSON.parse(text));
    if (!parsed.success)
      throw new Error(`${this.failedKey} does not hold a failed poll: ${parsed.error.message}`);
    return parsed.data;
  }

  /** Writes the summary, kept `ttlSeconds` (a few polls: a monitor that stopped polling lets it go). */
  async write(summary: AdmissionSummary, ttlSeconds: number): Promise<void> {
    await this.redis.set(this.key, JSON.stringify(summary), 'EX', Math.max(1, Math.ceil(ttlSeconds)));
  }

  /**
   * The last summary, or null when none is kept.
   * @throws Error naming the key when what is kept is not a summary
   */
  async read(): Promise<AdmissionSummary | null> {
    const text = await this.redis.get(this.key);
    if (text === null) return null;
    const parsed = AdmissionSummary.safeParse(JSON.parse(text));
    if (!parsed.success)
      throw new Error(`${this.key} does not hold an admission summary: ${parsed.error.message}`);
    return parsed.data;
  }
}
