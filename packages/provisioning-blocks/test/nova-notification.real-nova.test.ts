import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createEvent } from '@lifeguard/contracts';
import { createOpenStackClients } from '@lifeguard/openstack';
import {
  createTestVhost,
  randomKeyPrefix,
  requireRealNovaVariables,
  type TestVhost,
  waitFor,
} from '@lifeguard/testing';
import {
  COMPUTE_HOST,
  computePort,
  deleteTestKeys,
  portUuid,
  SOURCE,
  seedNetwork,
  startTestService,
  type TestService,
} from './support.ts';

/** The real-Nova harness's settings, exported by `npm test` (scripts/run-tests.mjs) from its env.sh. */
function harness() {
  requireRealNovaVariables(['NOVA_URL', 'RN_TOKEN', 'RN_IMAGE_ID', 'RN_FLAVOR_ID']);
  return {
    novaUrl: process.env.NOVA_URL!,
    token: process.env.RN_TOKEN!,
    imageId: process.env.RN_IMAGE_ID!,
    flavorId: process.env.RN_FLAVOR_ID!,
  };
}

async function nova(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  const settings = harness();
  const response = await fetch(`${settings.novaUrl}${path}`, {
    method,
    headers: {
      accept: 'application/json',
      'x-auth-token': settings.token,
      'x-openstack-nova-api-version': '2.74',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

describe('Nova notifications against real Nova (docs/neutron-provisioning-rules.md#nova-notification, #bug-scenarios 18)', () => {
  let vhost: TestVhost;
  let service: TestService;
  let serverId: string;
  const prefix = randomKeyPrefix('real-nova');

  before(async () => {
    const settings = harness();
    const boot = await nova('POST', '/servers', {
      server: {
        name: `lifeguard-pb-${randomUUID().slice(0, 8)}`,
        imageRef: settings.imageId,
        flavorRef: settings.flavorId,
        networks: 'none',
      },
    });
    assert.equal(boot.status, 202, JSON.stringify(boot.body));
    serverId = (boot.body as { server: { id: string } }).server.id;
    await waitFor(
      'the server ACTIVE',
      async () =>
        ((await nova('GET', `/servers/${serverId}`)).body as { server: { status: string } }).server.status ===
        'ACTIVE',
      120_000,
      500,
    );
    vhost = await createTestVhost('real-nova-pb');
    const compute = createOpenStackClients({
      env: { OS_AUTH_TYPE: 'admin_token', OS_TOKEN: settings.token, OS_ENDPOINT: settings.novaUrl },
      searchDirectories: [],
    }).compute;
    service = await startTestService(
      vhost.url,
      prefix,
      { LIFEGUARD_PROVISIONING_SEND_EVENTS_INTERVAL_SECONDS: '0.5' },
      { compute },
    );
    await seedNetwork(service.provisioning);
  });
  after(async () => {
    await service?.close();
    if (serverId) await nova('DELETE', `/servers/${serverId}`);
    await deleteTestKeys([prefix]);
    await vhost?.delete();
  });

  const novaEventsCounted = async (name: string, code: string) => {
    const metrics = await service.context.registry.metrics();
    const line = new RegExp(
      `lifeguard_provisioning_nova_events_total\\{name="${name}",code="${code}"[^}]*\\} (\\d+)`,
    ).exec(metrics);
    return Number(line?.[1] ?? 0);
  };

  it('a port of a real server turning ACTIVE through both completions is announced to Nova, which takes it (200)', async () => {
    const id = portUuid(1, 9);
    await service.provisioning.portProvisioning.create(computePort(id, { device_id: serverId }));
    await service.provisioning.callbacks.updateDeviceUp({ device: id, host: COMPUTE_HOST });
    await service.provisioning.callbacks.dhcpReadyOnPorts([id]);
    await waitFor(
      'Nova took network-vif-plugged',
      async () => (await novaEventsCounted('network-vif-plugged', '200')) >= 1,
    );
    assert.equal((await service.provisioning.ports.get(id))?.status, 'ACTIVE');
  });

  it('in one batch, the event for an unknown instance is refused (404) while the real server’s is taken (207)', async () => {
    const notifier = service.provisioning.notifier!;
    const plugged = (portId: string, deviceId: string, previousStatus: string, status: string) =>
      createEvent(
        'port.status.changed',
        { portId, previousStatus, status, deviceId, deviceOwner: 'compute:nova', host: COMPUTE_HOST },
        SOURCE,
      );
    // The first event goes alone; the next two, sent while the notifier waits, share one request.
    await notifier.notify(plugged(randomUUID(), serverId, 'DOWN', 'ACTIVE'));
    const outcomes = await Promise.all([
      notifier.notify(plugged(randomUUID(), serverId, 'DOWN', 'ACTIVE')),
      notifier.notify(plugged(randomUUID(), randomUUID(), 'ACTIVE', 'DOWN')),
    ]);
    assert.deepEqual(outcomes, [{ code: 200 }, { code: 404 }]);
    assert.ok((await novaEventsCounted('network-vif-unplugged', '404')) >= 1);
  });

  it('a request none of whose events Nova accepts (HTTP 404) is not retried', async () => {
    const before = await novaEventsCounted('network-vif-plugged', '404');
    const outcome = await service.provisioning.notifier!.notify(
      createEvent(
        'port.status.changed',
        {
          portId: randomUUID(),
          previousStatus: 'DOWN',
          status: 'ACTIVE',
          deviceId: randomUUID(),
          deviceOwner: 'compute:nova',
          host: COMPUTE_HOST,
        },
        SOURCE,
      ),
    );
    assert.deepEqual(outcome, { code: 404 });
    assert.equal((await novaEventsCounted('network-vif-plugged', '404')) - before, 1);
  });
});
