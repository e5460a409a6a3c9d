import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EVENTS_EXCHANGE } from '@lifeguard/contracts';
import { AmqpClient, createLogger, declareEventsTopology } from '@lifeguard/runtime';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import type { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import {
  BlockStore,
  createProvisioningMetrics,
  OUTBOX_GROUP,
  type OutboxEntry,
  OutboxRelay,
  PortStore,
  ProvisioningKeys,
  publishOutboxEntryTo,
} from '../src/index.ts';
import { SOURCE, storePort } from './support.ts';

const logger = createLogger({ service: 'test', level: 'silent' });

describe('outbox relay: confirmed publishing from the Redis outbox stream', () => {
  let vhost: TestVhost;
  let amqp: AmqpClient;
  let redis: Redis;
  const connections: Redis[] = [];
  const prefixes: string[] = [];
  const received: Array<{ messageId: string; routingKey: string; body: Record<string, unknown> }> = [];

  before(async () => {
    vhost = await createTestVhost('outbox');
    amqp = await AmqpClient.connect({
      url: vhost.url,
      connectionName: 'outbox-test',
      service: 'test',
      logger,
    });
    await amqp.declare(declareEventsTopology);
    await amqp.declare(async (channel) => {
      await channel.assertQueue('test.events', { durable: false });
      await channel.bindQueue('test.events', EVENTS_EXCHANGE, '#');
    });
    await amqp.consume({
      queue: 'test.events',
      prefetch: 100,
      contract: 'event',
      handler: async (body, message) => {
        received.push({
          messageId: String(message.properties.messageId),
          routingKey: message.fields.routingKey,
          body: body as Record<string, unknown>,
        });
      },
    });
    redis = testRedis();
  });
  after(async () => {
    for (const prefix of prefixes) await deleteKeysWithPrefix(redis, prefix);
    for (const connection of connections) connection.disconnect();
    await redis.quit();
    await amqp.close();
    await vhost.delete();
  });

  function setup(label: string) {
    const prefix = randomKeyPrefix(label);
    prefixes.push(prefix);
    const keys = new ProvisioningKeys(prefix);
    return { keys, blocks: new BlockStore(redis, keys, SOURCE), ports: new PortStore(redis, keys, SOURCE) };
  }

  function relay(
    keys: ProvisioningKeys,
    name: string,
    overrides: Partial<ConstructorParameters<typeof OutboxRelay>[0]> = {},
  ) {
    const blockingRedis = testRedis();
    connections.push(blockingRedis);
    return new OutboxRelay({
      redis,
      blockingRedis,
      keys,
      consumerName: name,
      publish: publishOutboxEntryTo(amqp),
      logger,
      blockMilliseconds: 100,
      claimIntervalMilliseconds: 200,
      retryDelayMilliseconds: 50,
      ...overrides,
    });
  }

  async function completeFresh(setupResult: ReturnType<typeof setup>, count: number, label: string) {
    const ids: string[] = [];
    for (let index = 0; index < count; index++) {
      const id = `${label}-${index}`;
      await storePort(setupResult.ports, { id });
      const result = await setupResult.blocks.provisioningComplete(id, 'port', 'L2');
      ids.push(result.event!.id);
    }
    return ids;
  }

  const receivedIds = (ids: string[]) => received.filter((each) => ids.includes(each.messageId));

  it('publishes every outbox event with a confirm (messageId = event id, routing key by object type) and then trims the outbox', async () => {
    const context = setup('relay-basic');
    const registry = new Registry();
    const metrics = createProvisioningMetrics(registry);
    const ids = await completeFresh(context, 20, 'basic');
    const worker = relay(context.keys, 'relay-1', { metrics });
    await worker.start();
    try {
      await waitFor('all 20 events received', () => receivedIds(ids).length === 20);
      await waitFor('outbox trimmed', async () => (await redis.xlen(context.keys.outbox)) === 0);
      const one = receivedIds(ids)[0]!;
      assert.equal(one.routingKey, 'provisioning.complete.port');
      assert.equal(one.body.id, one.messageId);
      assert.equal((await redis.xpending(context.keys.outbox, OUTBOX_GROUP))[0], 0);
      const published =
        /lifeguard_provisioning_outbox_published_total\{type="provisioning.complete"\} (\d+)/.exec(
          await registry.metrics(),
        );
      assert.equal(published?.[1], '20');
    } finally {
      await worker.stop();
    }
  });

  it('events appended while no relay runs are published once one starts', async () => {
    const context = setup('relay-late');
    const ids = await completeFresh(context, 5, 'late');
    assert.equal(await redis.xlen(context.keys.outbox), 5);
    const worker = relay(context.keys, 'relay-late');
    await worker.start();
    try {
      await waitFor('the 5 earlier events received', () => receivedIds(ids).length === 5);
    } finally {
      await worker.stop();
    }
  });

  it('two relays share the outbox through the consumer group: every event is published exactly once', async () => {
    const context = setup('relay-two');
    const first = relay(context.keys, 'relay-a');
    const second = relay(context.keys, 'relay-b');
    await Promise.all([first.start(), second.start()]);
    try {
      const ids = await completeFresh(context, 200, 'two');
      await waitFor('200 events received', () => receivedIds(ids).length >= 200);
      await waitFor('outbox trimmed', async () => (await redis.xlen(context.keys.outbox)) === 0);
      assert.equal(receivedIds(ids).length, 200);
      assert.equal(new Set(receivedIds(ids).map((each) => each.messageId)).size, 200);
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
  });

  it('entries a relay read but never acknowledged (it died) are claimed and published by a live relay', async () => {
    const context = setup('relay-claim');
    await redis.xgroup('CREATE', context.keys.outbox, OUTBOX_GROUP, '0', 'MKSTREAM');
    const ids = await completeFresh(context, 10, 'claim');
    // A relay that read the entries and then died before publishing them.
    const read = await redis.xreadgroup(
      'GROUP',
      OUTBOX_GROUP,
      'dead-relay',
      'COUNT',
      100,
      'STREAMS',
      context.keys.outbox,
      '>',
    );
    assert.equal((read as Array<[string, unknown[]]>)[0]![1].length, 10);
    const live = relay(context.keys, 'live-relay', { claimIdleMilliseconds: 300 });
    await live.start();
    try {
      await waitFor('the dead relay’s 10 events received', () => receivedIds(ids).length === 10);
      await waitFor(
        'nothing pending',
        async () => (await redis.xpending(context.keys.outbox, OUTBOX_GROUP))[0] === 0,
      );
    } finally {
      await live.stop();
    }
  });

  it('an unconfirmed publish leaves the event in the outbox and it is retried until confirmed', async () => {
    const context = setup('relay-retry');
    const ids = await completeFresh(context, 3, 'retry');
    let failuresLeft = 4;
    const publish = publishOutboxEntryTo(amqp);
    const worker = relay(context.keys, 'relay-flaky', {
      publish: async (entry: OutboxEntry) => {
        if (failuresLeft-- > 0) throw new Error('channel closed before the confirm');
        await publish(entry);
      },
    });
    await worker.start();
    try {
      await waitFor('all 3 events received after the failures', () => receivedIds(ids).length === 3);
      assert.ok(failuresLeft < 0);
      await waitFor('outbox trimmed', async () => (await redis.xlen(context.keys.outbox)) === 0);
    } finally {
      await worker.stop();
    }
  });

  it('an entry that gives no valid event goes to the dead outbox with its reason; the entries behind it are published', async () => {
    const context = setup('relay-dead');
    const metricsRegistry = new Registry();
    const metrics = createProvisioningMetrics(metricsRegistry);
    const source = { service: 'provisioning-blocks', instance: 'test' };
    const badIds = ['00000000-0000-4000-8000-00000000000a', '00000000-0000-4000-8000-00000000000b'];
    // An event JSON (the layout written before the facts) whose objectId is empty.
    const badEvent = {
      id: badIds[0],
      schemaVersion: 1,
      occurredAt: new Date().toISOString(),
      source,
      type: 'provisioning.complete',
      data: { objectType: 'port', objectId: '', entity: 'L2' },
    };
    await redis.xadd(
      context.keys.outbox,
      '*',
      'id',
      badIds[0]!,
      'type',
      'provisioning.complete',
      'routingKey',
      'provisioning.complete.port',
      'occurredAt',
      badEvent.occurredAt,
      'event',
      JSON.stringify(badEvent),
    );
    // The facts of a port.status.changed event whose port id was stored as null.
    await redis.xadd(
      context.keys.outbox,
      '*',
      'id',
      badIds[1]!,
      'type',
      'port.status.changed',
      'routingKey',
      'port.status.changed',
      'occurredAt',
      badEvent.occurredAt,
      'service',
      source.service,
      'instance',
      source.instance,
      'port:id',
      'null',
      'port:device_id',
      '""',
      'port:device_owner',
      '""',
      'port:binding:host_id',
      '""',
      'port:status',
      '"DOWN"',
      'status',
      'ACTIVE',
      'notifyNova',
      '1',
    );
    await redis.xadd(context.keys.outbox, '*', 'type', 'provisioning.complete');
    const ids = await completeFresh(context, 3, 'behind-dead');
    const relaying = relay(context.keys, 'dead-relay-test', { metrics });
    await relaying.start();
    try {
      await waitFor('the 3 valid events received', () => receivedIds(ids).length === 3);
      await waitFor('outbox trimmed', async () => (await redis.xlen(context.keys.outbox)) === 0);
    } finally {
      await relaying.stop();
    }
    assert.deepEqual(receivedIds(badIds), []);
    const dead = (await redis.xrange(`${context.keys.outbox}:dead`, '-', '+')).map(([, fields]) => {
      const values: Record<string, string> = {};
      for (let index = 0; index + 1 < fields.length; index += 2) values[fields[index]!] = fields[index + 1]!;
      return values;
    });
    assert.equal(dead.length, 3);
    assert.match(dead[0]!.reason ?? '', /objectId/);
    assert.equal(dead[0]!.id, badIds[0]);
    assert.match(dead[1]!.reason ?? '', /portId/);
    assert.equal(dead[1]!.id, badIds[1]);
    assert.match(dead[2]!.reason ?? '', /id/);
    assert.ok(dead.every((entry) => /^\d+-\d+$/.test(entry.streamId ?? '')));
    assert.match(await metricsRegistry.metrics(), /lifeguard_provisioning_outbox_dead_lettered_total 3/);
  });

  it('reports outbox depth and the age of the oldest waiting event', async () => {
    const context = setup('relay-depth');
    await completeFresh(context, 4, 'depth');
    const worker = relay(context.keys, 'relay-depth');
    const { depth, lagSeconds } = await worker.depthAndLag();
    assert.equal(depth, 4);
    assert.ok(lagSeconds >= 0 && lagSeconds < 60);
  });
});
