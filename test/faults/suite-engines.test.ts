// test-file: runs alone (restarts the fault suite's own RabbitMQ and Redis and lowers that Redis's maxmemory, under every other fault file)
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTestVhost, RABBITMQ, REDIS_URL, testRedis, waitFor } from '@lifeguard/testing';
import amqp from 'amqplib';
import {
  readSuiteEngines,
  restartSuiteRabbitmq,
  restartSuiteRedis,
  setRedisMaxMemory,
} from './support/suite-engines.ts';

/**
 * The engines the fault suite runs on: private, pointed at by every @lifeguard/testing helper, and
 * restartable by a test with or without their data.
 */
describe("the fault suite's own RabbitMQ and Redis", () => {
  it('are the ones the test helpers use, on other ports than the shared 5672 and 6379', () => {
    const engines = readSuiteEngines();
    assert.equal(RABBITMQ.port, engines.rabbitmq.amqpPort);
    assert.notEqual(RABBITMQ.port, 5672);
    assert.equal(RABBITMQ.managementUrl, `http://127.0.0.1:${engines.rabbitmq.managementPort}`);
    assert.equal(REDIS_URL, `redis://127.0.0.1:${engines.redis.port}/0`);
    assert.notEqual(engines.redis.port, 6379);
  });

  it('Redis restarted with append-only persistence keeps what it acknowledged; restarted without, comes back empty', async () => {
    const redis = testRedis();
    redis.on('error', () => undefined);
    await redis.set('suite-engines:kept', 'yes');
    const restart = await restartSuiteRedis({ persistence: 'append-only' });
    assert.ok(restart.answeringAt >= restart.stoppedAt);
    assert.equal(await redis.get('suite-engines:kept'), 'yes');
    await restartSuiteRedis({ persistence: 'none', how: 'shutdown' });
    assert.equal(await redis.get('suite-engines:kept'), null);
    redis.disconnect();
  });

  it('Redis with maxmemory below its use refuses writes with OOM and accepts them again once lifted', async () => {
    const redis = testRedis();
    await setRedisMaxMemory(1);
    await assert.rejects(redis.set('suite-engines:full', 'x'), /OOM/);
    await setRedisMaxMemory(null);
    assert.equal(await redis.set('suite-engines:full', 'x'), 'OK');
    await redis.quit();
  });

  it('RabbitMQ stopped and started again keeps a quorum queue and its confirmed message', async (t) => {
    const vhost = await createTestVhost('suite-engines');
    const connection = await amqp.connect(vhost.url);
    const channel = await connection.createConfirmChannel();
    await channel.assertQueue('kept', { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    channel.sendToQueue('kept', Buffer.from('still here'), { persistent: true });
    await channel.waitForConfirms();
    connection.on('error', () => undefined);
    const pidBefore = readSuiteEngines().rabbitmq.pid;
    const restart = await restartSuiteRabbitmq({ how: 'stop' });
    t.diagnostic(
      `RabbitMQ answered again ${(restart.answeringAt - restart.stoppedAt) / 1000} s after it stopped`,
    );
    assert.notEqual(readSuiteEngines().rabbitmq.pid, pidBefore);
    // The queue's Raft member elects itself leader again shortly after the node is up; until then
    // basic.get fails (541, and the connection with it), so ask on a fresh connection each time.
    const content = await waitFor(
      'the quorum queue to answer',
      async () => {
        const again = await amqp.connect(vhost.url);
        again.on('error', () => undefined);
        try {
          const message = await (await again.createChannel()).get('kept', { noAck: true });
          return message === false ? 'empty' : message.content.toString();
        } finally {
          await again.close().catch(() => undefined);
        }
      },
      60_000,
      500,
    );
    t.diagnostic(`the quorum queue answered ${(Date.now() - restart.answeringAt) / 1000} s after that`);
    assert.equal(content, 'still here');
    await vhost.delete();
  });
});
