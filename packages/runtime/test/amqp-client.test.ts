import assert from 'node:assert/strict';
import { type AddressInfo, connect as connectTcp, createServer, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { DEAD_LETTER_HEADERS, DEAD_LETTER_QUEUE } from '@lifeguard/contracts';
import {
  CapturedLines,
  closeConnectionByName,
  createTestVhost,
  type TestVhost,
  waitFor,
} from '@lifeguard/testing';
import type { Channel, GetMessage } from 'amqplib';
import { Registry } from 'prom-client';
import { z } from 'zod';
import {
  AmqpClient,
  createAmqpMetrics,
  createLogger,
  declareWorkQueue,
  RejectedMessageError,
  UnroutableMessageError,
} from '../src/index.ts';

const logger = createLogger({ service: 'runtime-test', level: 'silent' });
const Greeting = z.object({ text: z.string() });

/** Closes the connection named `name` (management API) and waits until `channel`, on it, has ended. */
async function cutUnder(name: string, channel: Channel): Promise<void> {
  assert.equal(await closeConnectionByName(name), 1);
  await waitFor('the channel ended', async () => {
    try {
      await channel.checkExchange('amq.direct');
      return false;
    } catch {
      return true;
    }
  });
}

describe('AmqpClient against the real RabbitMQ', () => {
  let vhost: TestVhost;
  const clients: AmqpClient[] = [];

  const connect = async (connectionName: string, clientLogger = logger) => {
    const client = await AmqpClient.connect({
      url: vhost.url,
      connectionName,
      service: 'runtime-test',
      logger: clientLogger,
      metrics: createAmqpMetrics(new Registry()),
    });
    clients.push(client);
    return client;
  };

  const declareQueue = (client: AmqpClient, queue: string) =>
    client.declare(async (channel) => {
      await channel.assertExchange('work', 'topic', { durable: true });
      await declareWorkQueue(channel, queue, [{ exchange: 'work', routingKey: queue }]);
    });

  before(async () => {
    vhost = await createTestVhost('runtime');
  });
  after(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await vhost.delete();
  });

  it('declares a work queue with extra arguments (single active consumer) next to the standard ones', async () => {
    const client = await connect('runtime-test-extra-arguments');
    await client.declare(async (channel) => {
      await channel.assertExchange('work', 'topic', { durable: true });
      await declareWorkQueue(channel, 'ordered', [{ exchange: 'work', routingKey: 'ordered' }], {
        'x-single-active-consumer': true,
      });
    });
    const queue = await vhost.get<{ arguments: Record<string, unknown> }>('queues/ordered');
    assert.equal(queue.arguments['x-single-active-consumer'], true);
    assert.equal(queue.arguments['x-queue-type'], 'quorum');
    assert.equal(queue.arguments['x-dead-letter-routing-key'], 'ordered');
  });

  it('publishes with a confirm and a consumer receives and acks the message', async () => {
    const client = await connect('runtime-test-confirm');
    await declareQueue(client, 'greetings');
    const received: string[] = [];
    await client.consume({
      queue: 'greetings',
      prefetch: 5,
      contract: 'greeting',
      schema: Greeting,
      handler: async (greeting) => {
        received.push(greeting.text);
      },
    });
    await client.publish('work', 'greetings', Buffer.from(JSON.stringify({ text: 'hello' })));
    await waitFor('the greeting', () => received.length === 1);
    assert.deepEqual(received, ['hello']);
    const queue = await waitFor('queue stats to show the ack', async () => {
      const stats = await vhost.get<{ messages: number }>('queues/greetings');
      return stats.messages === 0 ? stats : undefined;
    });
    assert.equal(queue.messages, 0);
  });

  it('rejects a publish nobody can route (mandatory + basic.return) instead of losing it', async () => {
    const client = await connect('runtime-test-unroutable');
    await client.declare(async (channel) => {
      await channel.assertExchange('nowhere', 'topic', { durable: false, autoDelete: true });
    });
    await assert.rejects(client.publish('nowhere', 'no.queue', Buffer.from('{}')), UnroutableMessageError);
  });

  it("names each key once on a dead-lettered message's log line (the consumer's logger already names the queue)", async () => {
    const lines = new CapturedLines();
    const client = await connect(
      'runtime-test-dead-letter-log',
      createLogger({ service: 'runtime-test', level: 'debug', destination: lines }),
    );
    await declareQueue(client, 'logged');
    await client.consume({
      queue: 'logged',
      prefetch: 1,
      contract: 'greeting',
      schema: Greeting,
      handler: async () => undefined,
    });
    await client.publish('work', 'logged', Buffer.from('{not json'));
    const line = await waitFor('the dead-letter log line', () =>
      lines.lines.find((each) => each.includes('message rejected and dead-lettered')),
    );
    assert.equal(JSON.parse(line).queue, 'logged');
    assert.deepEqual(lines.linesWithRepeatedKeys(), []);
    // The line is written before the dead letter is published: take that dead letter off the
    // vhost's dead-letter queue, so the next test finds only its own.
    await client.withChannel(async (channel) => {
      const dead = await waitFor('the dead letter', () => channel.get(DEAD_LETTER_QUEUE, { noAck: true }));
      assert.equal(dead.properties.headers?.[DEAD_LETTER_HEADERS.queue], 'logged');
    });
  });

  it('dead-letters a malformed message with its reason and keeps consuming', async () => {
    const client = await connect('runtime-test-dead-letter');
    await declareQueue(client, 'strict');
    const received: string[] = [];
    await client.consume({
      queue: 'strict',
      prefetch: 1,
      contract: 'greeting',
      schema: Greeting,
      handler: async (greeting) => {
        if (greeting.text === 'unknown-port')
          throw new RejectedMessageError('port unknown-port does not exist');
        received.push(greeting.text);
      },
    });
    await client.publish('work', 'strict', Buffer.from('{not json'), {
      messageId: 'message-1',
      type: 'greeting',
      timestamp: 1_700_000_000,
    });
    await client.publish('work', 'strict', Buffer.from(JSON.stringify({ text: 42 })));
    await client.publish('work', 'strict', Buffer.from(JSON.stringify({ text: 'unknown-port' })));
    await client.publish('work', 'strict', Buffer.from(JSON.stringify({ text: 'after the bad ones' })));
    await waitFor('the good message behind the bad ones', () => received.length === 1);
    assert.deepEqual(received, ['after the bad ones']);

    const dead: GetMessage[] = [];
    await client.withChannel(async (channel) => {
      await waitFor('three dead letters', async () => {
        const message = await channel.get(DEAD_LETTER_QUEUE, { noAck: true });
        if (message) dead.push(message);
        return dead.length === 3;
      });
    });
    const reasons = dead.map((message) => String(message.properties.headers?.[DEAD_LETTER_HEADERS.reason]));
    assert.match(reasons[0]!, /body is not JSON/);
    assert.match(reasons[1]!, /greeting: text: Invalid input: expected string, received number/);
    assert.match(reasons[2]!, /port unknown-port does not exist/);
    for (const message of dead) {
      assert.equal(message.properties.headers?.[DEAD_LETTER_HEADERS.queue], 'strict');
      assert.equal(message.properties.headers?.[DEAD_LETTER_HEADERS.routingKey], 'strict');
    }
    assert.equal(dead[0]!.content.toString(), '{not json', 'the original body is kept');
    assert.equal(dead[0]!.properties.messageId, 'message-1', 'the message id is kept');
    assert.equal(dead[0]!.properties.type, 'greeting');
    assert.equal(dead[0]!.properties.timestamp, 1_700_000_000);
  });

  it('requeues a message whose handler fails transiently, and processes it on redelivery', async () => {
    const client = await connect('runtime-test-requeue');
    await declareQueue(client, 'flaky');
    let calls = 0;
    const done: boolean[] = [];
    await client.consume({
      queue: 'flaky',
      prefetch: 1,
      contract: 'greeting',
      schema: Greeting,
      retryDelayMilliseconds: 50,
      handler: async () => {
        calls++;
        if (calls === 1) throw new Error('Redis is briefly unavailable');
        done.push(true);
      },
    });
    await client.publish('work', 'flaky', Buffer.from(JSON.stringify({ text: 'x' })));
    await waitFor('the retried message', () => done.length === 1);
    assert.equal(calls, 2);
  });

  it('a declaration cut off by a lost connection is declared again once reconnected, and declare() resolves (regression: a worker died at start-up on a 541)', async () => {
    const name = `runtime-test-declare-cut-${vhost.name}`;
    const client = await connect(name);
    let calls = 0;
    await client.declare(async (channel) => {
      calls += 1;
      if (calls === 1) {
        // The connection goes while the declaration is on it: its channel ends without a reply.
        await cutUnder(name, channel);
        await channel.assertQueue('declared-after-cut', { durable: true });
      }
      await channel.assertQueue('declared-after-cut', { durable: true });
    });
    assert.ok(calls >= 2, `declared again after the reconnect (${calls} calls)`);
    const queue = await client.withChannel((channel) => channel.checkQueue('declared-after-cut'));
    assert.equal(queue.queue, 'declared-after-cut');
  });

  it('a consumer whose start is cut off by a lost connection resolves, and consumes once reconnected (regression: a fencing worker died at start-up on a 541)', async () => {
    const name = `runtime-test-consume-cut-${vhost.name}`;
    const client = await connect(name);
    await declareQueue(client, 'consumed-after-cut');
    const received: string[] = [];
    let starts = 0;
    const consumer = await client.consume({
      queue: 'consumed-after-cut',
      prefetch: 1,
      contract: 'greeting',
      schema: Greeting,
      declare: async (channel) => {
        starts += 1;
        if (starts > 1) return;
        // The connection goes while the consumer starts: its channel ends without a reply.
        await cutUnder(name, channel);
      },
      handler: async (greeting) => {
        received.push(greeting.text);
      },
    });
    assert.equal(consumer.isStopped, false);
    await waitFor('the consumer to start on the new connection', () => client.consumersAlive, 20_000);
    await client.publish(
      'work',
      'consumed-after-cut',
      Buffer.from(JSON.stringify({ text: 'after the cut' })),
    );
    await waitFor('the message consumed', () => received.includes('after the cut'));
    const queue = await client.withChannel((channel) => channel.checkQueue('consumed-after-cut'));
    assert.equal(queue.consumerCount, 1, 'one consumer, not one per start');
  });

  it('a connection reset while a reconnect sets it up is tried again, not an unhandled error that ends the process', async () => {
    // A TCP proxy in front of RabbitMQ whose connections the test resets (TCP RST, as a flapping
    // network or a load balancer does).
    const accepted = new Set<Socket>();
    const proxy = createServer((downstream) => {
      const broker = new URL(vhost.url);
      const upstream = connectTcp(Number(broker.port || 5672), broker.hostname);
      accepted.add(downstream);
      const end = () => {
        accepted.delete(downstream);
        downstream.destroy();
        upstream.destroy();
      };
      for (const socket of [downstream, upstream]) {
        socket.on('error', end);
        socket.on('close', end);
      }
      downstream.pipe(upstream);
      upstream.pipe(downstream);
    });
    await new Promise<void>((listening) => proxy.listen(0, '127.0.0.1', listening));
    const resetAll = () => {
      for (const socket of accepted) socket.resetAndDestroy();
    };
    try {
      const url = new URL(vhost.url);
      url.host = `127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const client = await AmqpClient.connect({
        url: url.href,
        connectionName: `runtime-test-reset-under-setup-${vhost.name}`,
        service: 'runtime-test',
        logger,
        metrics: createAmqpMetrics(new Registry()),
      });
      clients.push(client);
      let setups = 0;
      let resetsUnderSetup = 0;
      await client.declare(async (channel) => {
        setups += 1;
        // The first declaration is this call's own; the next two are reconnects' set-ups, each reset
        // while it runs.
        if (setups > 1 && resetsUnderSetup < 2) {
          resetsUnderSetup += 1;
          resetAll();
        }
        await channel.assertQueue('declared-through-resets', { durable: true });
      });
      resetAll();
      await waitFor(
        'connected again after two resets under its set-up',
        () => resetsUnderSetup === 2 && client.isHealthy,
        30_000,
      );
      const queue = await client.withChannel((channel) => channel.checkQueue('declared-through-resets'));
      assert.equal(queue.queue, 'declared-through-resets');
    } finally {
      resetAll();
      await new Promise((closed) => proxy.close(closed));
    }
  });

  it('a consumer whose queue the broker refuses (404 NOT_FOUND) is thrown at once and not started again', async () => {
    const client = await connect(`runtime-test-consume-refused-${vhost.name}`);
    await assert.rejects(
      client.consume({
        queue: 'never-declared',
        prefetch: 1,
        contract: 'greeting',
        schema: Greeting,
        handler: async () => undefined,
      }),
      (error: { code?: number }) => error.code === 404,
    );
    assert.equal(client.consumersAlive, true, 'the refused consumer is not kept among those to restart');
  });

  it('a declaration the broker refuses (406 PRECONDITION_FAILED) is thrown at once, not tried again', async () => {
    const client = await connect(`runtime-test-declare-refused-${vhost.name}`);
    await client.declare(async (channel) => {
      await channel.assertQueue('declared-twice', { durable: true });
    });
    let calls = 0;
    await assert.rejects(
      client.declare(async (channel) => {
        calls += 1;
        await channel.assertQueue('declared-twice', { durable: false });
      }),
      (error: { code?: number }) => error.code === 406,
    );
    assert.equal(calls, 1);
  });

  it('reconnects after rabbitmqctl close_connection and resumes its consumers', async () => {
    const name = `runtime-test-reconnect-${vhost.name}`;
    const client = await connect(name);
    await declareQueue(client, 'resilient');
    const received: string[] = [];
    await client.consume({
      queue: 'resilient',
      prefetch: 1,
      contract: 'greeting',
      schema: Greeting,
      handler: async (greeting) => {
        received.push(greeting.text);
      },
    });
    assert.equal(await closeConnectionByName(name), 1);
    await waitFor('the connection to drop', () => !client.isHealthy, 10_000);
    await waitFor('the connection to come back', () => client.isHealthy && client.consumersAlive, 20_000);
    await client.publish('work', 'resilient', Buffer.from(JSON.stringify({ text: 'after reconnect' })));
    await waitFor('a message consumed after the reconnect', () => received.includes('after reconnect'));
    // The restart the dropped channel scheduled (1 s later) must not replace the consumer that the
    // reconnect started on the new connection: it stays alive, and /readyz with it.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    assert.equal(client.consumersAlive, true, 'still consuming 2.5 s after the reconnect');
  });

  it('consumes again after the broker cancels the consumer (queue deleted and redeclared)', async () => {
    const client = await connect('runtime-test-cancel');
    const received: string[] = [];
    await client.consume({
      queue: 'phoenix',
      prefetch: 1,
      contract: 'greeting',
      schema: Greeting,
      declare: async (channel) => {
        await channel.assertExchange('work', 'topic', { durable: true });
        await declareWorkQueue(channel, 'phoenix', [{ exchange: 'work', routingKey: 'phoenix' }]);
      },
      handler: async (greeting) => {
        received.push(greeting.text);
      },
    });
    await client.withChannel((channel) => channel.deleteQueue('phoenix'));
    await waitFor(
      'the consumer to come back',
      async () => {
        if (!client.consumersAlive) return false;
        const stats = await vhost.get<{ consumers?: number }>('queues/phoenix');
        return (stats.consumers ?? 0) === 1;
      },
      15_000,
      200,
    );
    await client.publish('work', 'phoenix', Buffer.from(JSON.stringify({ text: 'reborn' })));
    await waitFor('a message on the redeclared queue', () => received.includes('reborn'));
  });
});
