import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

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
