import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { DEAD_LETTER_EXCHANGE, DEAD_LETTER_QUEUE, REPLAY_HEADERS } from '@lifeguard/contracts';
import type { ReplayResult } from '@lifeguard/operator-actions';
import type { DeadLetter } from '@lifeguard/operator-views';
import { AmqpClient, RejectedMessageError } from '@lifeguard/runtime';
import { createTestVhost, type TestVhost, waitFor } from '@lifeguard/testing';
import type { ConsumeMessage } from 'amqplib';
import { pino } from 'pino';
import { lifeguard } from './support/cli-harness.ts';

describe('lifeguard dlq list|replay|purge', () => {
  let vhost: TestVhost;
  let client: AmqpClient;
  let env: NodeJS.ProcessEnv;
  /** While true the consumer of `orders` rejects everything (dead-letters it with a reason). */
  let rejecting = true;
  const received: ConsumeMessage[] = [];

  const deadLetterCount = () =>
    client.withChannel(async (channel) => (await channel.checkQueue(DEAD_LETTER_QUEUE)).messageCount);
  const list = async () =>
    (await lifeguard(['dlq', 'list', '--json'], env)).json<{ total: number; messages: DeadLetter[] }>();

  before(async () => {
    vhost = await createTestVhost('cli-dlq');
    env = { LIFEGUARD_AMQP_URL: vhost.url };
    client = await AmqpClient.connect({
      url: vhost.url,
      connectionName: 'cli-dlq-test',
      service: 'orders-service',
      logger: pino({ level: 'silent' }),
    });
    await client.declare(async (channel) => {
      await channel.assertExchange('shop', 'topic', { durable: true });
      await channel.assertQueue('orders', { durable: true });
      await channel.bindQueue('orders', 'shop', 'order.#');
      // A second queue on the same routing key: a replay must not give it a second copy.
      await channel.assertQueue('audit', { durable: true });
      await channel.bindQueue('audit', 'shop', 'order.#');
    });
    await client.consume({
      queue: 'orders',
      prefetch: 1,
      contract: 'order',
      handler: async (order: { id: string }, message) => {
        if (rejecting) throw new RejectedMessageError(`order ${order.id} refers to an unknown customer`);
        received.push(message);
      },
    });
  });

  after(async () => {
    await client.close();
    await vhost.delete();
  });

  it('on an empty dead-letter queue, says so', async () => {
    const run = await lifeguard(['dlq', 'list'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, `0 message(s) in ${DEAD_LETTER_QUEUE}\n`);
  });

  it('lists dead letters with reason, original queue and routing key, time, service and body, and leaves them there', async () => {
    await client.publish('shop', 'order.created', Buffer.from('{"id":"o-1"}'), { messageId: 'm-1' });
    await client.publish('shop', 'order.created', Buffer.from('{"id":"o-2"}'), { messageId: 'm-2' });
    await waitFor('two dead letters', async () => (await deadLetterCount()) === 2);
    const run = await lifeguard(['dlq', 'list'], env);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.trim().split('\n');
    assert.equal(lines[0], `2 message(s) in ${DEAD_LETTER_QUEUE}`);
    assert.match(lines[1]!, /^ID\s+DEAD-LETTERED\s+BY\s+QUEUE\s+ROUTING KEY\s+REASON\s+REPLAYS\s+BODY$/);
    assert.match(
      lines[2]!,
      /^[0-9a-f]{12}\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\s+orders-service\s+orders\s+order\.created\s+order o-1 refers to an unknown customer\s+0\s+\{"id":"o-1"\}$/,
    );
    assert.match(lines[3]!, /order o-2 refers to an unknown customer\s+0\s+\{"id":"o-2"\}$/);
    const body = await list();
    assert.equal(body.total, 2);
    assert.deepEqual(
      body.messages.map((letter) => [
        letter.messageId,
        letter.queue,
        letter.exchange,
        letter.routingKey,
        letter.deadLetteredBy,
      ]),
      [
        ['m-1', 'orders', 'shop', 'order.created', 'orders-service'],
        ['m-2', 'orders', 'shop', 'order.created', 'orders-service'],
      ],
    );
    assert.equal(await deadLetterCount(), 2, 'listing takes nothing away');
    const again = await list();
    assert.deepEqual(
      again.messages.map((letter) => letter.id),
      body.messages.map((letter) => letter.id),
      'ids are stable across listings',
    );
  });

  it('--dry-run says where each would go and moves nothing', async () => {
    const run = await lifeguard(['dlq', 'replay', '--dry-run', '--json'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(
      run.json<ReplayResult[]>().map((result) => [result.outcome, result.detail]),
      [
        ['skipped', 'dry run: would go to queue orders'],
        ['skipped', 'dry run: would go to queue orders'],
      ],
    );
    assert.equal(await deadLetterCount(), 2);
  });

  it('replays one message by id back to its queue exactly once, then the rest', async () => {
    rejecting = false;
    const [first, second] = (await list()).messages;
    const one = await lifeguard(['dlq', 'replay', '--id', first!.id], env);
    assert.equal(one.code, 0, one.stderr);
    assert.match(one.stdout, new RegExp(`^${first!.id}\\s+replayed\\s+queue orders$`, 'm'));
    assert.match(one.stdout, /^1 replayed, 0 failed, 1 left in lifeguard\.dead-letter$/m);
    await waitFor('the replayed order', () => received.length === 1);
    assert.equal(received[0]!.content.toString(), '{"id":"o-1"}');
    assert.equal(received[0]!.properties.messageId, 'm-1', 'the message id is kept');
    assert.equal(received[0]!.properties.headers?.[REPLAY_HEADERS.count], 1);
    assert.equal(received[0]!.properties.headers?.[REPLAY_HEADERS.by], `test-operator@${hostname()}`);
    assert.equal(await deadLetterCount(), 1);
    assert.deepEqual(
      (await list()).messages.map((letter) => letter.id),
      [second!.id],
    );

    const rest = await lifeguard(['dlq', 'replay', '--json'], env);
    assert.equal(rest.code, 0, rest.stderr);
    assert.deepEqual(
      rest.json<ReplayResult[]>().map((result) => [result.id, result.outcome]),
      [[second!.id, 'replayed']],
    );
    await waitFor('the second replayed order', () => received.length === 2);
    assert.equal(await deadLetterCount(), 0);
    // Exactly once each, and only to the queue that failed: the audit queue holds just the originals.
    assert.deepEqual(
      received.map((message) => message.properties.messageId),
      ['m-1', 'm-2'],
    );
    const audit = await client.withChannel((channel) => channel.checkQueue('audit'));
    assert.equal(audit.messageCount, 2);
  });

  it("replays a message RabbitMQ dead-lettered itself (x-death), described from the broker's headers", async () => {
    await client.declare(async (channel) => {
      await channel.assertQueue('payments', {
        durable: true,
        arguments: {
          'x-dead-letter-exchange': DEAD_LETTER_EXCHANGE,
          'x-dead-letter-routing-key': 'payments',
        },
      });
    });
    await client.publish('', 'payments', Buffer.from('{"amount":3}'), { messageId: 'p-1' });
    await client.withChannel(async (channel) => {
      const message = await waitFor('the payment', async () => (await channel.get('payments')) || undefined);
      channel.nack(message, false, false);
    });
    await waitFor('the broker dead letter', async () => (await deadLetterCount()) === 1);
    const [letter] = (await list()).messages;
    assert.equal(letter?.reason, 'rejected');
    assert.equal(letter?.queue, 'payments');
    assert.equal(letter?.deadLetteredBy, 'rabbitmq');
    assert.equal(letter?.messageId, 'p-1');
    assert.match(letter?.deadLetteredAt ?? '', /^\d{4}-\d\d-\d\dT/);

    const run = await lifeguard(['dlq', 'replay'], env);
    assert.equal(run.code, 0, run.stderr);
    const back = await client.withChannel((channel) => channel.get('payments', { noAck: true }));
    assert.ok(back, 'the payment is back in its queue');
    assert.equal(back.content.toString(), '{"amount":3}');
    assert.equal(
      back.properties.headers?.['x-death'],
      undefined,
      'the dead-lettering record is not carried back',
    );
    assert.equal(await deadLetterCount(), 0);
  });

  it('a message whose queue is gone stays in the dead-letter queue, and the command fails (exit 1)', async () => {
    rejecting = true;
    await client.declare(async (channel) => {
      await channel.assertQueue('short-lived', { durable: true });
    });
    await client.publish(DEAD_LETTER_EXCHANGE, 'short-lived', Buffer.from('{"id":"x"}'), {
      headers: {
        'x-lifeguard-dead-letter-reason': 'test',
        'x-lifeguard-original-queue': 'short-lived',
      },
    });
    await client.withChannel((channel) => channel.deleteQueue('short-lived'));
    const run = await lifeguard(['dlq', 'replay'], env);
    assert.equal(run.code, 1);
    assert.match(
      run.stdout,
      /failed\s+message to exchange "" with routing key "short-lived" was returned: no queue is bound/,
    );
    assert.match(
      run.stderr,
      /^lifeguard: 1 message\(s\) could not be replayed; they stay in lifeguard\.dead-letter$/m,
    );
    assert.equal(await deadLetterCount(), 1);
  });

  it('purge asks for --yes (exit 2, nothing deleted), then deletes everything', async () => {
    const refused = await lifeguard(['dlq', 'purge'], env);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /not confirmed; nothing was changed \(add --yes to confirm\)/);
    assert.equal(await deadLetterCount(), 1);
    const purged = await lifeguard(['dlq', 'purge', '--yes'], env);
    assert.equal(purged.code, 0, purged.stderr);
    assert.equal(purged.stdout, `purged 1 message(s) from ${DEAD_LETTER_QUEUE}\n`);
    assert.equal(await deadLetterCount(), 0);
    const empty = await lifeguard(['dlq', 'purge', '--yes'], env);
    assert.equal(empty.stdout, `${DEAD_LETTER_QUEUE} is already empty\n`);
  });

  /** Dead-letters orders `names` (to queue `orders`), oldest first, and waits until all are queued. */
  const deadLetterOrders = async (names: ReadonlyArray<string>) => {
    const before = await deadLetterCount();
    for (const name of names) {
      await client.publish(DEAD_LETTER_EXCHANGE, 'orders', Buffer.from(`{"id":"${name}"}`), {
        messageId: name,
        headers: { 'x-lifeguard-dead-letter-reason': 'test', 'x-lifeguard-original-queue': 'orders' },
      });
    }
    await waitFor('the dead letters', async () => (await deadLetterCount()) === before + names.length);
  };
  const listedIds = async () => (await list()).messages.map((letter) => letter.messageId);

  it('list --limit and a dry run keep the order of the queue (they read it all and put it back at once)', async () => {
    await deadLetterOrders(['A', 'B', 'C']);
    const first = await lifeguard(['dlq', 'list', '--limit', '1', '--json'], env);
    assert.equal(first.code, 0, first.stderr);
    const shown = first.json<{ total: number; messages: DeadLetter[] }>();
    assert.equal(shown.total, 3);
    assert.deepEqual(
      shown.messages.map((letter) => letter.messageId),
      ['A'],
    );
    const table = await lifeguard(['dlq', 'list', '--limit', '2'], env);
    assert.match(table.stdout, /^3 message\(s\) in lifeguard\.dead-letter, showing the first 2$/m);
    assert.deepEqual(await listedIds(), ['A', 'B', 'C'], 'listing one does not move it to the back');
    const dry = await lifeguard(['dlq', 'replay', '--dry-run', '--limit', '1', '--json'], env);
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(dry.json<ReplayResult[]>().length, 1);
    assert.deepEqual(await listedIds(), ['A', 'B', 'C'], 'a dry run does not reorder the queue');
    assert.equal(await deadLetterCount(), 3);
  });

  it('replay --id counts what is left in the queue, finds an id past --limit, and exits 1 for an id not there', async () => {
    rejecting = false;
    const letters = (await list()).messages;
    const [a, b, c] = letters;
    const one = await lifeguard(['dlq', 'replay', '--id', b!.id], env);
    assert.equal(one.code, 0, one.stderr);
    assert.match(one.stdout, /^1 replayed, 0 failed, 2 left in lifeguard\.dead-letter$/m);
    assert.deepEqual(await listedIds(), ['A', 'C'], 'the others keep their order');

    const far = await lifeguard(['dlq', 'replay', '--limit', '1', '--id', c!.id, '--json'], env);
    assert.equal(far.code, 0, far.stderr);
    assert.deepEqual(
      far.json<ReplayResult[]>().map((result) => [result.id, result.outcome]),
      [[c!.id, 'replayed']],
    );

    const unknown = await lifeguard(['dlq', 'replay', '--id', 'feedfacecafe', '--id', a!.id], env);
    assert.equal(unknown.code, 1, 'an id that is not there is a failure');
    assert.match(unknown.stdout, /^feedfacecafe\s+not-found\s+not in lifeguard\.dead-letter$/m);
    assert.match(unknown.stdout, /^1 replayed, 0 failed, 0 left in lifeguard\.dead-letter$/m);
    assert.match(
      unknown.stderr,
      /^lifeguard: 1 of the 2 message\(s\) asked for are not in lifeguard\.dead-letter$/m,
    );
    await waitFor('the replayed orders', () => received.length === 5);
    assert.deepEqual(
      received.slice(2).map((message) => message.properties.messageId),
      ['B', 'C', 'A'],
    );
    assert.equal(await deadLetterCount(), 0);
  });
});
