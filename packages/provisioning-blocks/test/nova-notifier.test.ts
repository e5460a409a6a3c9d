import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createEvent,
  DEAD_LETTER_HEADERS,
  DEAD_LETTER_QUEUE,
  type EventOf,
  PORT_STATUSES,
  QUEUES,
} from '@lifeguard/contracts';
import { AmqpClient, EventPublisher } from '@lifeguard/runtime';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import { novaEventFor } from '../src/status/nova-events.ts';
import { NovaNotifier } from '../src/status/nova-notifier.ts';
import { RecordingNova } from './recording-nova.ts';
import {
  COMPUTE_HOST,
  computePort,
  portUuid,
  SOURCE,
  seedNetwork,
  startTestService,
  testLogger,
} from './support.ts';

const SERVER = '5d3c1f4e-2b6a-4c8d-9e0f-1a2b3c4d5e6f';

function statusChange(
  previousStatus: string,
  status: string,
  overrides: Partial<EventOf<'port.status.changed'>['data']> = {},
): EventOf<'port.status.changed'> {
  return createEvent(
    'port.status.changed',
    {
      portId: 'port-1',
      previousStatus,
      status,
      deviceId: SERVER,
      deviceOwner: 'compute:nova',
      host: 'compute-1',
      ...overrides,
    },
    SOURCE,
  );
}

describe('Nova notification rules (research A.4.2, A.5.1 item 31)', () => {
  it('every previous/current status pair gives exactly Neutron’s transition rules', () => {
    const statuses = ['', ...PORT_STATUSES];
    for (const previous of statuses) {
      for (const current of statuses) {
        const event = novaEventFor(statusChange(previous, current));
        let expected: string | null = null;
        if (previous === 'ACTIVE' && current === 'DOWN') expected = 'network-vif-unplugged/completed';
        else if (['', 'DOWN', 'BUILD'].includes(previous) && current === 'ACTIVE')
          expected = 'network-vif-plugged/completed';
        else if (['', 'DOWN', 'BUILD'].includes(previous) && current === 'ERROR')
          expected = 'network-vif-plugged/failed';
        assert.equal(
          event ? `${event.name}/${event.status}` : null,
          expected,
          `${previous || '(unset)'} -> ${current}`,
        );
        if (event) assert.deepEqual([event.server_uuid, event.tag], [SERVER, 'port-1']);
      }
    }
  });

  it('nothing for a device_id that is not a UUID, an empty one, a non-compute owner, or a change marked notifyNova false', () => {
    assert.equal(novaEventFor(statusChange('DOWN', 'ACTIVE', { deviceId: 'router-1' })), null);
    assert.equal(novaEventFor(statusChange('DOWN', 'ACTIVE', { deviceId: '' })), null);
    assert.equal(novaEventFor(statusChange('DOWN', 'ACTIVE', { deviceOwner: 'network:dhcp' })), null);
    assert.equal(novaEventFor(statusChange('DOWN', 'ACTIVE', { deviceOwner: '' })), null);
    assert.equal(novaEventFor(statusChange('DOWN', 'ACTIVE', { notifyNova: false })), null);
    assert.notEqual(
      novaEventFor(statusChange('DOWN', 'ACTIVE', { deviceId: SERVER.replaceAll('-', '').toUpperCase() })),
      null,
    );
  });

  it('a direct vif-plugged (device up on a host the port is not bound to) gives network-vif-plugged/completed', () => {
    const event = createEvent(
      'port.vif.plugged',
      {
        portId: 'port-1',
        deviceId: SERVER,
        deviceOwner: 'compute:nova',
        host: 'compute-2',
        boundHost: 'compute-1',
      },
      SOURCE,
    );
    assert.deepEqual(novaEventFor(event), {
      server_uuid: SERVER,
      name: 'network-vif-plugged',
      status: 'completed',
      tag: 'port-1',
    });
  });
});

describe('Nova notifier against a recording Compute endpoint (batching, 207, retries)', () => {
  let vhost: TestVhost;
  let amqp: AmqpClient;
  let events: EventPublisher;
  const nova = new RecordingNova();
  let url: string;

  before(async () => {
    vhost = await createTestVhost('nova');
    url = await nova.start();
    amqp = await AmqpClient.connect({
      url: vhost.url,
      connectionName: 'nova-test',
      service: 'test',
      logger: testLogger,
    });
    events = new EventPublisher(amqp, SOURCE, testLogger);
  });
  after(async () => {
    await amqp.close();
    await nova.stop();
    await vhost.delete();
  });

  async function withNotifier(
    settings: { interval?: number; maxAttempts?: number },
    work: (notifier: NovaNotifier) => Promise<void>,
  ): Promise<void> {
    const notifier = new NovaNotifier({
      amqp,
      compute: nova.client(url),
      logger: testLogger,
      prefetch: 100,
      sendEventsIntervalSeconds: settings.interval ?? 0.05,
      maxAttempts: settings.maxAttempts ?? 5,
      initialBackoffMilliseconds: 20,
    });
    await notifier.start();
    try {
      await work(notifier);
    } finally {
      await notifier.stop();
    }
  }

  /** Messages left in the queue (after the notifier stopped, unacknowledged ones are back in it). */
  const messagesLeft = () =>
    amqp.withChannel(
      async (channel) => (await channel.checkQueue(QUEUES.novaPortNotifications)).messageCount,
    );
  const plugged = (index: number) => statusChange('DOWN', 'ACTIVE', { portId: `port-${index}` });

  it('sends the first event at once and gathers the ones that follow into one request (send_events_interval)', async () => {
    nova.requests.length = 0;
    await withNotifier({ interval: 1 }, async () => {
      await events.publishEvent(plugged(1));
      await waitFor('the first request', () => nova.requests.length === 1);
      for (let index = 2; index <= 6; index++) await events.publishEvent(plugged(index));
      await waitFor('the second request', () => nova.requests.length === 2);
      assert.deepEqual(
        nova.requests[1]!.events.map((event) => event.tag),
        ['port-2', 'port-3', 'port-4', 'port-5', 'port-6'],
      );
      assert.equal(nova.requests[0]!.token, 'recording-token');
    });
    assert.equal(await messagesLeft(), 0, 'every message was acknowledged');
  });

  it('treats each event of a 207 on its own: the refused one is logged, the other taken, nothing retried (bug 18, Nova 1333654)', async () => {
    nova.requests.length = 0;
    await withNotifier({ interval: 0.3 }, async (notifier) => {
      // The first event goes alone; the next two are gathered into the second request.
      nova.answers.push(
        () => ({ status: 200 }),
        () => ({ status: 207, codes: [200, 422] }),
      );
      await notifier.notify(plugged(6));
      const shelved = '6e4d2a5f-3c7b-4d9e-8f1a-2b3c4d5e6f70';
      const outcomes = await Promise.all([
        notifier.notify(plugged(7)),
        notifier.notify(statusChange('ACTIVE', 'DOWN', { portId: 'port-8', deviceId: shelved })),
      ]);
      assert.deepEqual(outcomes, [{ code: 200 }, { code: 422 }]);
      assert.equal(nova.requests.length, 2);
      assert.deepEqual(
        nova.requests[1]!.events.map((event) => event.name),
        ['network-vif-plugged', 'network-vif-unplugged'],
      );
    });
  });

  it('a 404 for the whole request (no event accepted) is not retried', async () => {
    nova.requests.length = 0;
    await withNotifier({}, async (notifier) => {
      nova.answers.push(() => ({ status: 404 }));
      assert.deepEqual(await notifier.notify(plugged(9)), { code: 404 });
      assert.equal(nova.requests.length, 1);
    });
  });

  it('retries 500 answers with back-off until Nova takes the events', async () => {
    nova.requests.length = 0;
    await withNotifier({}, async (notifier) => {
      nova.answers.push(
        () => ({ status: 500 }),
        () => ({ status: 503 }),
      );
      assert.deepEqual(await notifier.notify(plugged(10)), { code: 200 });
      assert.equal(nova.requests.length, 3);
    });
  });

  it('after the last attempt the message is dead-lettered with the reason, and the queue keeps flowing', async () => {
    nova.requests.length = 0;
    await withNotifier({ maxAttempts: 3 }, async () => {
      nova.answers.push(
        () => ({ status: 500 }),
        () => ({ status: 500 }),
        () => ({ status: 500 }),
      );
      await events.publishEvent(plugged(11));
      const dead = await waitFor('the dead letter', () =>
        amqp.withChannel(async (channel) => {
          const message = await channel.get(DEAD_LETTER_QUEUE, { noAck: true });
          return message === false ? undefined : message;
        }),
      );
      assert.equal(dead.properties.headers?.[DEAD_LETTER_HEADERS.queue], QUEUES.novaPortNotifications);
      assert.match(
        String(dead.properties.headers?.[DEAD_LETTER_HEADERS.reason]),
        /Nova was not notified.*after 3 attempt/,
      );
      await events.publishEvent(plugged(12));
      await waitFor('the next event delivered', () => nova.events.some((event) => event.tag === 'port-12'));
    });
  });
});

describe('Nova notifications from the running service (research A.2.3, A.3.2, A.4.2; A.5.1 item 23)', () => {
  let vhost: TestVhost;
  const nova = new RecordingNova();
  let url: string;
  const prefixes: string[] = [];

  before(async () => {
    vhost = await createTestVhost('nova-service');
    url = await nova.start();
  });
  after(async () => {
    await nova.stop();
    const redis = testRedis();
    for (const prefix of prefixes) await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
    await vhost.delete();
  });

  it('ACTIVE sends network-vif-plugged, device down sends network-vif-unplugged, device up on another host sends a direct vif-plugged', async () => {
    const prefix = randomKeyPrefix('nova-service');
    prefixes.push(prefix);
    const service = await startTestService(
      vhost.url,
      prefix,
      { LIFEGUARD_PROVISIONING_SEND_EVENTS_INTERVAL_SECONDS: '0.05' },
      { compute: nova.client(url) },
    );
    try {
      await seedNetwork(service.provisioning);
      const id = portUuid(1, 7);
      const port = computePort(id);
      await service.provisioning.portProvisioning.create(port);
      await service.provisioning.callbacks.dhcpReadyOnPorts([id]);
      await service.provisioning.callbacks.updateDeviceUp({ device: id, host: COMPUTE_HOST });
      await waitFor('network-vif-plugged', () => nova.events.some((event) => event.tag === id));
      assert.deepEqual(
        nova.events.find((event) => event.tag === id),
        {
          server_uuid: port.device_id,
          name: 'network-vif-plugged',
          status: 'completed',
          tag: id,
        },
      );
      await service.provisioning.callbacks.updateDeviceDown({ device: id, host: COMPUTE_HOST });
      await waitFor('network-vif-unplugged', () =>
        nova.events.some((event) => event.tag === id && event.name === 'network-vif-unplugged'),
      );
      await service.provisioning.callbacks.updateDeviceUp({ device: id, host: 'compute-migration-target' });
      await waitFor(
        'the direct network-vif-plugged',
        () =>
          nova.events.filter((event) => event.tag === id && event.name === 'network-vif-plugged').length ===
          2,
      );
      assert.equal((await service.provisioning.ports.get(id))?.status, 'DOWN', 'blocks and status untouched');
    } finally {
      await service.close();
    }
  });

  it('with notify_nova_on_port_status_changes off Nova hears nothing, even for the direct vif-plugged (item 23)', async () => {
    const prefix = randomKeyPrefix('nova-off');
    prefixes.push(prefix);
    const before = nova.requests.length;
    const service = await startTestService(
      vhost.url,
      prefix,
      { LIFEGUARD_PROVISIONING_NOTIFY_NOVA_ON_PORT_STATUS_CHANGES: 'false' },
      { compute: nova.client(url) },
    );
    try {
      assert.equal(service.provisioning.notifier, null);
      await seedNetwork(service.provisioning);
      const id = portUuid(2, 7);
      await service.provisioning.portProvisioning.create(computePort(id, { fixed_ips: [] }));
      await service.provisioning.callbacks.updateDeviceUp({ device: id, host: COMPUTE_HOST });
      await waitFor(
        'the port ACTIVE',
        async () => (await service.provisioning.ports.get(id))?.status === 'ACTIVE',
      );
      await service.provisioning.callbacks.updateDeviceUp({ device: id, host: 'compute-migration-target' });
      await waitFor(
        'the outbox drained',
        async () => (await service.provisioning.relay.depthAndLag()).depth === 0,
      );
      assert.equal(nova.requests.length, before);
    } finally {
      await service.close();
    }
  });
});
