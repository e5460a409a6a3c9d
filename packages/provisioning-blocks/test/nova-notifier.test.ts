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
import { type AmqpClient, EventPublisher } from '@lifeguard/runtime';
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
import { type NovaTold, RedisNovaTold } from '../src/status/nova-told.ts';
import { ProvisioningKeys } from '../src/store/provisioning-keys.ts';
import { startSimulatedNova } from './cloud-sim-nova.ts';
import {
  COMPUTE_HOST,
  computePort,
  connectTestAmqp,
  deleteTestKeys,
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

describe('Nova notification rules (docs/neutron-provisioning-rules.md#nova-notification, #neutrons-tests 31)', () => {
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

describe('Nova notifier against the simulated cloud (batching, 207, retries)', () => {
  let vhost: TestVhost;
  let amqp: AmqpClient;
  let events: EventPublisher;
  let nova: Awaited<ReturnType<typeof startSimulatedNova>>;
  let onHost: string;
  let shelved: string;

  before(async () => {
    vhost = await createTestVhost('nova');
    nova = await startSimulatedNova();
    onHost = nova.sim.addServer({ name: 'on-a-host', host: 'compute1' }).id;
    const offloaded = nova.sim.addServer({ name: 'shelved', host: 'compute2', vmState: 'shelved_offloaded' });
    offloaded.host = null;
    shelved = offloaded.id;
    amqp = await connectTestAmqp(vhost.url, 'nova-test');
    events = new EventPublisher(amqp, SOURCE, testLogger);
  });
  after(async () => {
    await amqp.close();
    await nova.sim.close();
    await vhost.delete();
  });

  async function withNotifier(
    settings: { interval?: number; maxAttempts?: number; told?: NovaTold },
    work: (notifier: NovaNotifier) => Promise<void>,
  ): Promise<void> {
    const notifier = new NovaNotifier({
      amqp,
      compute: nova.compute,
      logger: testLogger,
      prefetch: 100,
      sendEventsIntervalSeconds: settings.interval ?? 0.05,
      maxAttempts: settings.maxAttempts ?? 5,
      initialBackoffMilliseconds: 20,
      ...(settings.told ? { told: settings.told } : {}),
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
  const plugged = (index: number, deviceId = onHost) =>
    statusChange('DOWN', 'ACTIVE', { portId: `port-${index}`, deviceId });
  const received = (tag: string) => nova.sim.externalEvents().filter((event) => event.tag === tag);
  const injectFailures = (status: number, count: number) =>
    nova.sim.injectResponse({
      status,
      body: JSON.stringify({ computeFault: { code: status, message: 'injected' } }),
      contentType: 'application/json',
      pathPrefix: nova.eventsPath,
      count,
    });

  it('sends the first event at once and gathers the ones that follow into one request (send_events_interval)', async () => {
    nova.requests.length = 0;
    await withNotifier({ interval: 2 }, async () => {
      await events.publishEvent(plugged(1));
      await waitFor('the first request', () => nova.requests.length === 1);
      for (let index = 2; index <= 6; index++) await events.publishEvent(plugged(index));
      await waitFor('the second request', () => nova.requests.length === 2);
      assert.deepEqual(
        nova.requests[1]!.map((event) => event.tag),
        ['port-2', 'port-3', 'port-4', 'port-5', 'port-6'],
      );
      await waitFor('Nova took all six', () =>
        [1, 2, 3, 4, 5, 6].every((index) => received(`port-${index}`)[0]?.code === 200),
      );
    });
    assert.equal(await messagesLeft(), 0, 'every message was acknowledged');
  });

  it('treats each event of a 207 on its own: the shelved instance’s is refused (422), the other taken, nothing retried (bug 18, Nova 1333654)', async () => {
    nova.requests.length = 0;
    await withNotifier({ interval: 0.3 }, async (notifier) => {
      // The first event goes alone; the next two are gathered into the second request.
      await notifier.notify(plugged(7));
      const outcomes = await Promise.all([
        notifier.notify(plugged(8)),
        notifier.notify(statusChange('ACTIVE', 'DOWN', { portId: 'port-9', deviceId: shelved })),
      ]);
      assert.deepEqual(outcomes, [{ code: 200 }, { code: 422 }]);
      assert.equal(nova.requests.length, 2);
      assert.deepEqual(
        nova.requests[1]!.map((event) => event.name),
        ['network-vif-plugged', 'network-vif-unplugged'],
      );
      assert.equal(received('port-9').length, 1, 'the refused event was not sent again');
    });
  });

  it('an event for an unknown instance is refused (404) and not retried', async () => {
    nova.requests.length = 0;
    await withNotifier({}, async (notifier) => {
      assert.deepEqual(await notifier.notify(plugged(10, '7f6e5d4c-3b2a-4190-8f7e-6d5c4b3a2910')), {
        code: 404,
      });
      assert.equal(nova.requests.length, 1);
    });
  });

  it('a 404 for the whole request (no event accepted) is not retried', async () => {
    nova.requests.length = 0;
    await withNotifier({}, async (notifier) => {
      injectFailures(404, 1);
      assert.deepEqual(await notifier.notify(plugged(11)), { code: 404 });
      assert.equal(nova.requests.length, 1);
    });
  });

  it('tells Nova once of a port event delivered twice (redelivered after a crash before its ack): the second is acknowledged untold', async () => {
    const redis = testRedis();
    const keys = new ProvisioningKeys(randomKeyPrefix('nova-told'));
    try {
      nova.requests.length = 0;
      const event = plugged(40);
      await withNotifier({ told: new RedisNovaTold(redis, keys) }, async () => {
        await events.publishEvent(event);
        await waitFor('Nova told once', () => received('port-40').length === 1);
        await events.publishEvent(event);
        await waitFor('the second delivery acknowledged', async () => (await messagesLeft()) === 0);
        await waitFor('the mark written', async () => (await redis.exists(keys.novaTold(event.id))) === 1);
      });
      assert.equal(received('port-40').length, 1, 'network-vif-plugged sent once');
      assert.equal(await messagesLeft(), 0);
    } finally {
      await deleteKeysWithPrefix(redis, keys.prefix);
      await redis.quit();
    }
  });

  it('retries 500 answers with back-off until Nova takes the events', async () => {
    nova.requests.length = 0;
    await withNotifier({}, async (notifier) => {
      injectFailures(500, 2);
      assert.deepEqual(await notifier.notify(plugged(12)), { code: 200 });
      assert.equal(nova.requests.length, 3);
      assert.equal(received('port-12').length, 1);
    });
  });

  it('after the last attempt the message is dead-lettered with the reason, and the queue keeps flowing', async () => {
    await withNotifier({ maxAttempts: 3 }, async () => {
      injectFailures(500, 3);
      await events.publishEvent(plugged(13));
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
      await events.publishEvent(plugged(14));
      await waitFor('the next event delivered', () => received('port-14').length === 1);
    });
  });
});

describe('Nova notifications from the running service, against the simulated cloud (docs/neutron-provisioning-rules.md#nova-notification, #neutrons-tests 23)', () => {
  let vhost: TestVhost;
  let nova: Awaited<ReturnType<typeof startSimulatedNova>>;
  const prefixes: string[] = [];

  before(async () => {
    vhost = await createTestVhost('nova-service');
    nova = await startSimulatedNova();
  });
  after(async () => {
    await nova.sim.close();
    await deleteTestKeys(prefixes);
    await vhost.delete();
  });

  const eventsOf = (tag: string) => nova.sim.externalEvents().filter((event) => event.tag === tag);

  it('ACTIVE sends network-vif-plugged, device down sends network-vif-unplugged, device up on another host sends a direct vif-plugged', async () => {
    const prefix = randomKeyPrefix('nova-service');
    prefixes.push(prefix);
    const server = nova.sim.addServer({ name: 'vm-1', host: 'compute1' });
    const service = await startTestService(
      vhost.url,
      prefix,
      { LIFEGUARD_PROVISIONING_SEND_EVENTS_INTERVAL_SECONDS: '0.05' },
      { compute: nova.compute },
    );
    try {
      await seedNetwork(service.provisioning);
      const id = portUuid(1, 7);
      await service.provisioning.portProvisioning.create(computePort(id, { device_id: server.id }));
      await service.provisioning.callbacks.dhcpReadyOnPorts([id]);
      await service.provisioning.callbacks.updateDeviceUp({ device: id, host: COMPUTE_HOST });
      await waitFor('network-vif-plugged', () => eventsOf(id).length === 1);
      assert.deepEqual(
        eventsOf(id).map((event) => [event.name, event.status, event.server_uuid, event.code]),
        [['network-vif-plugged', 'completed', server.id, 200]],
      );
      await service.provisioning.callbacks.updateDeviceDown({ device: id, host: COMPUTE_HOST });
      await waitFor('network-vif-unplugged', () => eventsOf(id).length === 2);
      assert.equal(eventsOf(id)[1]?.name, 'network-vif-unplugged');
      await service.provisioning.callbacks.updateDeviceUp({ device: id, host: 'compute-migration-target' });
      await waitFor('the direct network-vif-plugged', () => eventsOf(id).length === 3);
      assert.equal(eventsOf(id)[2]?.name, 'network-vif-plugged');
      assert.equal((await service.provisioning.ports.get(id))?.status, 'DOWN', 'blocks and status untouched');
    } finally {
      await service.close();
    }
  });

  it('with notify_nova_on_port_status_changes off Nova hears nothing, even for the direct vif-plugged (item 23)', async () => {
    const prefix = randomKeyPrefix('nova-off');
    prefixes.push(prefix);
    const server = nova.sim.addServer({ name: 'vm-2', host: 'compute1' });
    const service = await startTestService(
      vhost.url,
      prefix,
      { LIFEGUARD_PROVISIONING_NOTIFY_NOVA_ON_PORT_STATUS_CHANGES: 'false' },
      { compute: nova.compute },
    );
    try {
      assert.equal(service.provisioning.notifier, null);
      await seedNetwork(service.provisioning);
      const id = portUuid(2, 7);
      await service.provisioning.portProvisioning.create(
        computePort(id, { device_id: server.id, fixed_ips: [] }),
      );
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
      assert.equal(eventsOf(id).length, 0);
    } finally {
      await service.close();
    }
  });
});
