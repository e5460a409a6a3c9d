import type { RedisClient } from '@lifeguard/runtime';

/** Outbox entries not yet published (and trimmed), and how long the oldest has waited. */
export interface OutboxDepth {
  readonly depth: number;
  /** Age of the oldest entry in seconds; 0 for an empty outbox. */
  readonly lagSeconds: number;
}

/**
 * The outbox stream's depth and the age of its oldest entry (from the entry id's milliseconds) at
 * `nowMilliseconds`: what the relay's metrics and the operator's views both show.
 */
export async function readOutboxDepth(
  redis: RedisClient,
  outboxKey: string,
  nowMilliseconds: number,
): Promise<OutboxDepth> {
  const [depth, oldest] = await Promise.all([
    redis.xlen(outboxKey),
    redis.xrange(outboxKey, '-', '+', 'COUNT', 1),
  ]);
  const oldestMilliseconds = oldest[0] ? Number(oldest[0][0].split('-')[0]) : null;
  return {
    depth,
    lagSeconds: oldestMilliseconds === null ? 0 : Math.max(0, (nowMilliseconds - oldestMilliseconds) / 1000),
  };
}
