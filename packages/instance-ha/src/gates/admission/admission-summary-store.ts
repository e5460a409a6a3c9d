import type { RedisClient } from '@lifeguard/runtime';
import { redisKey } from '@lifeguard/runtime';
import { AdmissionSummary } from './admission-summary.ts';

/** The leader's last admission summary: `<prefix>:instance-ha:admission:last-cycle` (JSON, with a TTL). */
export class AdmissionSummaryStore {
  private readonly key: string;

  constructor(
    private readonly redis: RedisClient,
    keyPrefix: string,
  ) {
    this.key = redisKey(keyPrefix, 'instance-ha', 'admission', 'last-cycle');
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
