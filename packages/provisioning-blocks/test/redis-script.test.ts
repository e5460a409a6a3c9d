import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { testRedis } from '@lifeguard/testing';
import { type RedisScript, runScript } from '../src/index.ts';

describe('Lua scripts run as ioredis commands (defineCommand)', () => {
  const connections = [testRedis(), testRedis()];
  after(async () => {
    for (const connection of connections) await connection.quit();
  });

  it('a script the server has never seen (NOSCRIPT) is loaded and run on first use, then known by its SHA-1', async () => {
    const [redis] = connections as [ReturnType<typeof testRedis>];
    // A comment unique to this run makes a script no Redis server has loaded yet.
    const lua = `-- ${randomUUID()}\nreturn {#KEYS, #ARGV, ARGV[1]}`;
    const script: RedisScript = { command: `testEcho${randomUUID().replaceAll('-', '')}`, lua };
    const sha1 = createHash('sha1').update(lua).digest('hex');
    assert.deepEqual(await redis.script('EXISTS', sha1), [0]);
    assert.deepEqual(await runScript(redis, script, ['k'], ['v', 2]), [1, 2, 'v']);
    assert.deepEqual(await redis.script('EXISTS', sha1), [1]);
    assert.equal(typeof (redis as unknown as Record<string, unknown>)[script.command], 'function');
    assert.deepEqual(await runScript(redis, script, [], ['w']), [0, 1, 'w']);
  });

  it('each connection defines the command for itself; an error raised by the script rejects', async () => {
    const script: RedisScript = {
      command: 'testFails',
      lua: `return redis.error_reply('refused: ' .. ARGV[1])`,
    };
    for (const redis of connections) {
      await assert.rejects(runScript(redis, script, [], ['because']), /refused: because/);
    }
  });
});
