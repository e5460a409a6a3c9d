import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REDIS_URL } from '@lifeguard/testing';
import { connectRedis, createLogger, isRedisCluster } from '../src/index.ts';

const logger = createLogger({ service: 'runtime-test', level: 'silent' });

describe('connectRedis', () => {
  it('passes extra ioredis options (auto-pipelining) and the connection answers', async () => {
    const redis = await connectRedis(
      { url: REDIS_URL, keyPrefix: 'unused' },
      'default',
      'runtime-test:pipelined',
      logger,
      5000,
      {
        enableAutoPipelining: true,
      },
    );
    try {
      assert.ok(!isRedisCluster(redis), 'one server, not a cluster');
      assert.equal(redis.options.enableAutoPipelining, true);
      assert.equal(redis.options.connectionName, 'runtime-test:pipelined');
      const answers = await Promise.all(Array.from({ length: 50 }, () => redis.ping()));
      assert.ok(answers.every((answer) => answer === 'PONG'));
    } finally {
      await redis.quit();
    }
  });
});
