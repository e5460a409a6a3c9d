import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEAD_LETTER_HEADERS, DEAD_LETTER_QUEUE } from '@lifeguard/contracts';
import { createTestVhost, type TestVhost, waitFor } from '@lifeguard/testing';
import type { GetMessage } from 'amqplib';
import { AmqpClient, createLogger, declareWorkQueue, RejectedMessageError } from '../src/index.ts';

const logger = createLogger({ service: 'runtime-test', level: 'silent' });

/**
 * A message whose headers are close to the 64 KiB a header table can take: its dead-letter copy
 * (the original headers plus the reason and origin) must still be publishable, or the message is
 * requeued for ever and holds its consumer's prefetch slot.
 */
describe('dead-lettering a message with very large headers', () => {
  let vhost: TestVhost;
  let client: AmqpClient;

  before(async () => {
    vhost = await createTestVhost('dead-letter-headers');
    client = await AmqpClient.connect({
      url: vhost.url,
      connectionName: 'dead-letter-headers',
      service: 'runtime-test',
      logger,
    });
    await client.declare(async (channel) => {
      await channel.assertExchange('work', 'topic', { durable: true });
      await declareWorkQueue(channel, 'bulky', [{ exchange: 'work', routingKey: 'bulky' }]);
    });
  });
  after(async () => {
    await client.close();
    await vhost.delete();
  });

  it('dead-letters it with its reason (the oversized original headers dropped and said so) and keeps consuming', async () => {
    const received: string[] = [];
    await client.consume({
      queue: 'bulky',
      prefetch: 1,
      contract: 'bulky message',
      handler: async (body) => {
        const text = (body as { text?: string }).text ?? '';
        if (text === 'refused') throw new RejectedMessageError('refused on purpose');
        received.push(text);
      },
    });
    await client.publish('work', 'bulky', Buffer.from(JSON.stringify({ text: 'refused' })), {
      messageId: 'bulky-1',
      headers: { 'x-bulk': 'x'.repeat(65_300) },
    });
    await client.publish('work', 'bulky', Buffer.from(JSON.stringify({ text: 'behind it' })));
    await waitFor('the message behind it', () => received.length === 1, 10_000);

    const dead = await client.withChannel((channel) =>
      waitFor('the dead letter', async () => {
        const message: GetMessage | false = await channel.get(DEAD_LETTER_QUEUE, { noAck: true });
        return message && message.properties.messageId === 'bulky-1' ? message : undefined;
      }),
    );
    const headers = dead.properties.headers ?? {};
    assert.equal(headers[DEAD_LETTER_HEADERS.reason], 'refused on purpose');
    assert.equal(headers[DEAD_LETTER_HEADERS.queue], 'bulky');
    assert.ok(!('x-bulk' in headers), 'the oversized original header is not copied');
    assert.match(String(headers['x-lifeguard-original-headers-dropped']), /^\d+ bytes$/);
    // The management API's counts lag by a few seconds.
    await waitFor(
      'nothing left requeued',
      async () => (await vhost.get<{ messages: number }>('queues/bulky')).messages === 0,
      15_000,
    );
  });
});
