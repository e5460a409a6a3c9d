import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { REDIS_URL, startPrivateRedis, testRedis } from '@lifeguard/testing';
import { Redis } from 'ioredis';
import {
  defineRedisScripts,
  type RedisScript,
  RedisScriptNotDefinedError,
  redisScriptSource,
  runScript,
} from '../src/index.ts';

/** A script no Redis server has loaded yet: a comment unique to this run changes its SHA-1. */
function freshScript(lua: string): RedisScript & { sha1: string } {
  const script = {
    command: `testScript${randomUUID().replaceAll('-', '')}`,
    lua: `-- ${randomUUID()}\n${lua}`,
  };
  return { ...script, sha1: createHash('sha1').update(redisScriptSource(script)).digest('hex') };
}

describe('Lua scripts run as ioredis commands (defineCommand)', () => {
  const plain = testRedis();
  const autoPipelined = new Redis(REDIS_URL, { enableAutoPipelining: true, lazyConnect: false });
  after(async () => {
    await plain.quit();
    await autoPipelined.quit();
  });

  it('a script the server has never seen is loaded and run on first use once defined, then known by its SHA-1', async () => {
    const script = freshScript('return {#KEYS, #ARGV, ARGV[1]}');
    assert.deepEqual(await plain.script('EXISTS', script.sha1), [0]);
    defineRedisScripts(plain, [script]);
    assert.deepEqual(await runScript(plain, script, ['k'], ['v', 2]), [1, 2, 'v']);
    assert.deepEqual(await plain.script('EXISTS', script.sha1), [1]);
    assert.equal(typeof (plain as unknown as Record<string, unknown>)[script.command], 'function');
    assert.deepEqual(await runScript(plain, script, [], ['w']), [0, 1, 'w']);
  });

  it('scripts defined up front run on an auto-pipelined connection in the same tick as other commands', async () => {
    const scripts = [freshScript('return ARGV[1]'), freshScript('return #KEYS')];
    defineRedisScripts(autoPipelined, scripts);
    // Commands issued in one tick share one pipeline, created by the first of them.
    const replies = await Promise.all([
      autoPipelined.ping(),
      runScript(autoPipelined, scripts[0]!, [], ['first']),
      autoPipelined.ping(),
      runScript(autoPipelined, scripts[1]!, ['a', 'b'], []),
      runScript(autoPipelined, scripts[0]!, [], ['again']),
    ]);
    assert.deepEqual(replies, ['PONG', 'first', 'PONG', 2, 'again']);
  });

  it('a script never defined on the connection is refused with RedisScriptNotDefinedError, before anything is sent', async () => {
    const script = freshScript('return 1');
    for (const redis of [plain, autoPipelined]) {
      await assert.rejects(
        runScript(redis, script, [], []),
        (error: unknown) => error instanceof RedisScriptNotDefinedError && error.command === script.command,
      );
    }
    assert.deepEqual(await plain.script('EXISTS', script.sha1), [0]);
  });

  it('an error raised by the script rejects with its message', async () => {
    const script = freshScript(`return redis.error_reply('refused: ' .. ARGV[1])`);
    for (const redis of [plain, autoPipelined]) {
      defineRedisScripts(redis, [script]);
      await assert.rejects(runScript(redis, script, [], ['because']), /refused: because/);
    }
  });
});

describe('Lua scripts when Redis is out of memory (maxmemory reached, noeviction)', () => {
  it('a script that writes is refused before its first command, so none of its writes is applied; a read-only one still runs', async () => {
    const server = await startPrivateRedis();
    const redis = new Redis(server.url(0));
    try {
      // The shape of a completion: remove a block, then append the event. Without the refusal up
      // front, the removal would stay and the event would be refused: half applied.
      const complete = freshScript(
        "redis.call('SREM', KEYS[1], ARGV[1]); redis.call('XADD', KEYS[2], '*', 'entity', ARGV[1]); return 1",
      );
      const count = { ...freshScript("return redis.call('SCARD', KEYS[1])"), readOnly: true };
      defineRedisScripts(redis, [complete, count]);
      await redis.sadd('blocks', 'dhcp', 'l2');
      await redis.config('SET', 'maxmemory', '1');
      await assert.rejects(runScript(redis, complete, ['blocks', 'outbox'], ['dhcp']), /OOM/);
      assert.deepEqual((await redis.smembers('blocks')).sort(), ['dhcp', 'l2'], 'the block is still there');
      assert.equal(await redis.exists('outbox'), 0, 'no event appended');
      assert.equal(await runScript(redis, count, ['blocks'], []), 2, 'the read-only script ran');
      await redis.config('SET', 'maxmemory', '0');
      assert.equal(await runScript(redis, complete, ['blocks', 'outbox'], ['dhcp']), 1);
      assert.deepEqual(await redis.smembers('blocks'), ['l2']);
      assert.equal(await redis.xlen('outbox'), 1);
    } finally {
      redis.disconnect();
      await server.stop();
    }
  });
});
