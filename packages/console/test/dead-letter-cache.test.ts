// The console lists the dead-letter queue by taking and returning every message, which counts as a
// delivery of each: it must read it only on a page load and only when the queue changed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEAD_LETTER_QUEUE } from '@lifeguard/contracts';
import { AmqpClient, createLogger } from '@lifeguard/runtime';
import { createTestVhost, type TestVhost } from '@lifeguard/testing';
import { DeadLetterCache } from '../src/readers/dead-letter-cache.ts';

describe('the dead letters on the queues page', () => {
  let vhost: TestVhost;
  let amqp: AmqpClient;

  before(async () => {
    vhost = await createTestVhost('console-dlq');
    amqp = await AmqpClient.connect({
      url: vhost.url,
      connectionName: 'console-dlq-test',
      service: 'test',
      logger: createLogger({ service: 'test', level: 'silent' }),
    });
  });

  after(async () => {
    await amqp?.close();
    await vhost?.delete();
  });

  /** The `x-delivery-count` of each message (how often it was taken and returned), by message id. */
  const deliveryCounts = () =>
    amqp.withChannel(async (channel) => {
      const counts: Record<string, number> = {};
      for (;;) {
        const message = await channel.get(DEAD_LETTER_QUEUE, { noAck: false });
        if (message === false) break;
        counts[String(message.properties.messageId)] = Number(
          message.properties.headers?.['x-delivery-count'] ?? 0,
        );
      }
      channel.nackAll(true);
      return counts;
    });

  it('reads the queue once on a page load, never on live refreshes, and again only after it changed', async () => {
    // Confirmed: the queue's count includes the message before the next listing reads it (an
    // unconfirmed send could still be on its way and leave the count one short).
    const send = (id: string) => amqp.publish('', DEAD_LETTER_QUEUE, Buffer.from('{}'), { messageId: id });
    await send('first');
    const cache = new DeadLetterCache();
    assert.equal(
      (await cache.listing(amqp, false)).letters,
      null,
      'a live refresh before any page load reads nothing',
    );
    const loaded = await cache.listing(amqp, true);
    assert.deepEqual([loaded.count, loaded.letters?.length, loaded.stale], [1, 1, false]);
    for (let refresh = 0; refresh < 3; refresh++) await cache.listing(amqp, false);
    await cache.listing(amqp, true);
    assert.equal((await cache.listing(amqp, true)).letters?.length, 1);

    await send('second');
    const refreshed = await cache.listing(amqp, false);
    assert.deepEqual(
      [refreshed.count, refreshed.letters?.length, refreshed.stale],
      [2, 1, true],
      'the last listing, marked stale',
    );
    const reloaded = await cache.listing(amqp, true);
    assert.deepEqual([reloaded.count, reloaded.letters?.length, reloaded.stale], [2, 2, false]);
    // Two reads in all: the first message was taken and returned twice, the second once.
    assert.deepEqual(await deliveryCounts(), { first: 2, second: 1 });
  });
});
