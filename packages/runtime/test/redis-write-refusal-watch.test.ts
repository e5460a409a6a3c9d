import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  CapturedLines,
  closedPort,
  type PrivateRedis,
  startDetachedRedis,
  startPrivateRedis,
  stopProcessGroup,
} from '@lifeguard/testing';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { createLogger } from '../src/logger.ts';
import {
  isRedisOutOfMemory,
  RedisWriteRefusalWatch,
  redisWriteRefusal,
} from '../src/redis/redis-write-refusal-watch.ts';

/** A Redis of the test's own: its maxmemory is lowered below its use, which the shared one must not go through. */
describe('RedisWriteRefusalWatch', () => {
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
    const watch = new RedisWriteRefusalWatch({
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

describe('RedisWriteRefusalWatch when Redis cannot persist (MISCONF)', () => {
  it('reports the refusal with Redis’s own words (error log, gauge 1) and its end once Redis can write to its disk again', async () => {
    // A Redis of the test's own whose data folder is a subfolder the test can take away (Redis 7
    // refuses to change `dir` at run time).
    const parent = mkdtempSync(join(tmpdir(), 'lifeguard-misconf-'));
    const directory = join(parent, 'data');
    const port = await closedPort();
    const pid = await startDetachedRedis({ port, directory, appendOnly: false });
    const redis = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
    try {
      const lines = new CapturedLines();
      const registry = new Registry();
      const watch = new RedisWriteRefusalWatch({
        redis,
        keyPrefix: 't-disk',
        instance: 'test',
        logger: createLogger({ service: 'test', destination: lines }),
        registry,
      });
      const gauge = async () =>
        (await registry.getSingleMetric('lifeguard_redis_writes_refused')!.get()).values[0]!.value;
      // Snapshots on, into a folder that then disappears: the next snapshot fails, and with
      // stop-writes-on-bgsave-error (Redis's default) every write is refused with MISCONF, as on a full disk.
      await redis.config('SET', 'save', '3600 1');
      await redis.config('SET', 'stop-writes-on-bgsave-error', 'yes');
      rmSync(directory, { recursive: true, force: true });
      await redis.bgsave().catch(() => undefined);
      const refused = await (async () => {
        for (let attempt = 0; attempt < 100; attempt++) {
          const reading = await watch.look();
          if (!reading.acceptsWrites) return reading;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        throw new Error('Redis never refused a write after its snapshot failed');
      })();
      assert.equal(refused.refusal, 'disk');
      assert.match(refused.refusalMessage ?? '', /^MISCONF /);
      assert.equal(watch.refusingWrites, true);
      assert.equal(await gauge(), 1);
      const error = await redis.set('t-disk:x', '1').catch((caught: unknown) => caught);
      assert.equal(redisWriteRefusal(error), 'disk');
      const errors = lines.records().filter((record) => record.level === 50);
      assert.equal(errors.length, 1);
      assert.match(String(errors[0]!.msg), /cannot write to its disk \(MISCONF/);
      assert.match(String(errors[0]!.redisError), /^MISCONF /);

      // Redis keeps its working folder open, so a folder made again is not its own: the refusal is
      // lifted the way an operator may while the disk is mended, by not stopping writes on snapshot errors.
      await redis.config('SET', 'stop-writes-on-bgsave-error', 'no');
      for (let attempt = 0; attempt < 100 && watch.refusingWrites; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        await watch.look();
      }
      assert.equal(watch.refusingWrites, false);
      assert.equal(await gauge(), 0);
      assert.match(String(lines.records().at(-1)!.msg), /accepts writes again \(it can write to its disk\)/);
    } finally {
      redis.disconnect();
      await stopProcessGroup(pid);
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it('tells the kinds of refusal apart', () => {
    assert.equal(
      redisWriteRefusal(new Error("OOM command not allowed when used memory > 'maxmemory'.")),
      'out-of-memory',
    );
    assert.equal(
      redisWriteRefusal(new Error('MISCONF Errors writing to the AOF file: No space left on device')),
      'disk',
    );
    assert.equal(redisWriteRefusal(new Error('ERR unknown command')), null);
    assert.equal(redisWriteRefusal('MISCONF'), null);
  });
});
