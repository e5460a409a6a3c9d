import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CapturedLines, type PrivateRedis, startPrivateRedis } from '@lifeguard/testing';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { createLogger } from '../src/logger.ts';
import { isRedisOutOfMemory, RedisOutOfMemoryWatch } from '../src/redis/redis-out-of-memory-watch.ts';

/** A Redis of the test's own: its maxmemory is lowered below its use, which the shared one must not go through. */
describe('RedisOutOfMemoryWatch', () => {
  let server: PrivateRedis;
  let redis: Redis;
  before(async () => {
    server = await startPrivateRedis(1);
    redis = new Redis(server.url(0), { maxRetriesPerRequest: 1 });
  });
  after(async () => {
    await redis.quit();
    await server.stop();
  });

  it('reports Redis refusing writes for lack of memory (error log naming OOM, gauge 1) and its end (info log, gauge 0)', async () => {
    const lines = new CapturedLines();
    const registry = new Registry();
    const watch = new RedisOutOfMemoryWatch({
      redis,
      keyPrefix: 't-memory',
      instance: 'test',
      logger: createLogger({ service: 'test', destination: lines }),
      registry,
    });
    const gauge = async () =>
      (await registry.getSingleMetric('lifeguard_redis_writes_refused')!.get()).values[0]!.value;

    assert.equal((await watch.look()).acceptsWrites, true);
    assert.equal(await gauge(), 0);
    assert.equal(lines.lines.length, 0, 'nothing logged while Redis accepts writes');

    await redis.config('SET', 'maxmemory', '1');
    const refused = await watch.look();
    assert.equal(refused.acceptsWrites, false);
    assert.equal(refused.maxBytes, 1);
    assert.equal(refused.policy, 'noeviction');
    assert.equal(watch.refusingWrites, true);
    assert.equal(await gauge(), 1);
    await watch.look();
    const errors = lines.records().filter((record) => record.level === 50);
    assert.equal(errors.length, 1, 'one error line for the whole refusal, not one per look');
    assert.match(String(errors[0]!.msg), /out of memory \(OOM/);
    assert.equal(errors[0]!.maxMemoryBytes, 1);

    await redis.config('SET', 'maxmemory', '0');
    assert.equal((await watch.look()).acceptsWrites, true);
    assert.equal(watch.refusingWrites, false);
    assert.equal(await gauge(), 0);
    assert.match(String(lines.records().at(-1)!.msg), /accepts writes again/);
  });

  it('tells an OOM refusal from other Redis errors', async () => {
    await redis.config('SET', 'maxmemory', '1');
    const error = await redis.set('t-memory:x', '1').catch((caught: unknown) => caught);
    await redis.config('SET', 'maxmemory', '0');
    assert.equal(isRedisOutOfMemory(error), true);
    assert.equal(isRedisOutOfMemory(new Error('ERR unknown command')), false);
    assert.equal(isRedisOutOfMemory('OOM'), false);
  });
});
