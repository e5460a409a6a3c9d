import { randomUUID } from 'node:crypto';
import { type Cluster, Redis } from 'ioredis';

/** Where the tests find Redis (override with LIFEGUARD_TEST_REDIS_URL). */
export const REDIS_URL = process.env.LIFEGUARD_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';

/** A random key prefix (`t-<label>-<random>`) isolating one test's keys in the shared Redis. */
export function randomKeyPrefix(label = 'test'): string {
  return `t-${label}-${randomUUID().slice(0, 8)}`;
}

/** A Redis connection for tests. */
export function testRedis(): Redis {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: 3 });
}

/** Deletes every key starting with `<prefix>:` (SCAN, never KEYS). */
export async function deleteKeysWithPrefix(redis: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) deleted += await redis.del(...keys);
  } while (cursor !== '0');
  return deleted;
}

/**
 * Stands in for a leader that held `token`: raises the lease's token counter (`counterKey`, runtime's
 * `leaseTokenKey(nodeMonitorLeaderKey(prefix))`) to at least `token`, so consumers that refuse tokens
 * the lease never issued accept it. Never lowers the counter.
 */
export async function issueFencingToken(
  redis: Redis | Cluster,
  counterKey: string,
  token: number,
): Promise<void> {
  await redis.eval(
    "if tonumber(redis.call('GET', KEYS[1]) or '0') < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end",
    1,
    counterKey,
    String(token),
  );
}
