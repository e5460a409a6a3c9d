import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { encodeOsloBody, OSLO_MESSAGE_PROPERTIES } from '@lifeguard/contracts';
import { ConfigError, environmentSource } from '@lifeguard/runtime';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import type { Redis } from 'ioredis';
import { loadProvisioningConfiguration, rpcAmqpUrl } from '../src/configuration.ts';
import { ServiceProcess } from './service-process.ts';
import {
  computePort,
  connectTestAmqp,
  createStores,
  portUuid,
  seedNetwork,
  startTestService,
} from './support.ts';

describe('configuration', () => {
  it('an invalid variable stops start-up with an error naming the key', () => {
    // An unknown driver, and names every JavaScript object inherits, are refused alike.
    for (const drivers of ['openvswitch,frobnicator', 'toString', 'openvswitch,constructor', '__proto__']) {
      assert.throws(
        () =>
          loadProvisioningConfiguration([
            environmentSource({ LIFEGUARD_PROVISIONING_MECHANISM_DRIVERS: drivers }),
          ]),
        (error: unknown) =>
          error instanceof ConfigError &&
          /LIFEGUARD_PROVISIONING_MECHANISM_DRIVERS \(environment\)/.test(error.message),
        drivers,
      );
    }
    assert.throws(
      () =>
        loadProvisioningConfiguration([
          environmentSource({ LIFEGUARD_PROVISIONING_AGENT_DOWN_TIME_SECONDS: '0' }),
        ]),
      /LIFEGUARD_PROVISIONING_AGENT_DOWN_TIME_SECONDS/,
    );
  });

  it('defaults follow Neutron and oslo (agent_down_time 75 s, exchange neutron, q-plugin, q-reports-plugin, send_events_interval 2 s)', () => {
    const configuration = loadProvisioningConfiguration([environmentSource({})]);
    assert.equal(configuration.LIFEGUARD_PROVISIONING_AGENT_DOWN_TIME_SECONDS, 75);
    assert.equal(configuration.LIFEGUARD_PROVISIONING_RPC_EXCHANGE, 'neutron');
    assert.equal(configuration.LIFEGUARD_PROVISIONING_RPC_PLUGIN_TOPIC, 'q-plugin');
    assert.equal(configuration.LIFEGUARD_PROVISIONING_RPC_REPORTS_TOPIC, 'q-reports-plugin');
    assert.equal(configuration.LIFEGUARD_PROVISIONING_SEND_EVENTS_INTERVAL_SECONDS, 2);
    assert.equal(configuration.LIFEGUARD_PROVISIONING_RPC_DURABLE_QUEUES, false);
  });

  it('the agents’ vhost can be set apart from lifeguard’s own', () => {
    const configuration = loadProvisioningConfiguration([
      environmentSource({ LIFEGUARD_PROVISIONING_RPC_VHOST: 'neutron' }),
    ]);
    assert.equal(
      rpcAmqpUrl(configuration, 'amqp://guest:guest@rabbit:5672/lifeguard'),
      'amqp://guest:guest@rabbit:5672/neutron',
    );
    const root = loadProvisioningConfiguration([
      environmentSource({ LIFEGUARD_PROVISIONING_RPC_VHOST: '/' }),
    ]);
    assert.equal(
      rpcAmqpUrl(root, 'amqp://guest:guest@rabbit:5672/lifeguard'),
      'amqp://guest:guest@rabbit:5672/%2F',
    );
  });
});

describe('the provisioning-blocks process', () => {
  let vhost: TestVhost;
  let redis: Redis;
  const prefixes: string[] = [];

  before(async () => {
    vhost = await createTestVhost('process');
    redis = testRedis();
  });
  after(async () => {
    for (const prefix of prefixes) await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
    await vhost.delete();
  });

  const environment = (prefix: string, extra: Record<string, string> = {}) => ({
    LIFEGUARD_AMQP_URL: vhost.url,
    LIFEGUARD_REDIS_KEY_PREFIX: prefix,
    LIFEGUARD_PROVISIONING_NOTIFY_NOVA_ON_PORT_STATUS_CHANGES: 'false',
    ...extra,
  });

  it('exits 78 naming the key when a variable is invalid, before connecting to anything', async () => {
    const service = ServiceProcess.start({
      LIFEGUARD_PROVISIONING_ROLE: 'everything',
      LIFEGUARD_AMQP_URL: 'amqp://guest:guest@127.0.0.1:1/',
    });
    const { code } = await service.exited();
    assert.equal(code, 78);
    assert.match(service.stderr.join(''), /LIFEGUARD_PROVISIONING_ROLE \(environment\)/);
  });

  it('exits 78 naming OS_CLOUD when Nova is to be notified and no cloud is configured', async () => {
    const service = ServiceProcess.start({
      LIFEGUARD_AMQP_URL: vhost.url,
      HOME: '/nonexistent',
      OS_CLOUD: '',
      OS_AUTH_URL: '',
      OS_ENDPOINT: '',
      OS_AUTH_TYPE: '',
      OS_TOKEN: '',
      XDG_CONFIG_HOME: '/nonexistent',
    });
    const { code } = await service.exited();
    assert.equal(code, 78);
    assert.match(service.stderr.join(''), /OS_CLOUD/);
  });

  it('serves readiness and the lifeguard_provisioning_* metrics, and on SIGTERM stops without losing a request', async () => {
    const prefix = randomKeyPrefix('process');
    prefixes.push(prefix);
    const stores = createStores(redis, prefix);
    await seedNetwork(stores);
    const ids = Array.from({ length: 300 }, (_, index) => portUuid(index, 4));
    for (const id of ids) await stores.portProvisioning.create(computePort(id, { 'binding:host_id': '' }));
    const service = ServiceProcess.start(environment(prefix, { LIFEGUARD_PROVISIONING_RPC_PREFETCH: '10' }));
    try {
      const port = await service.started();
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      assert.equal(ready.status, 200);
      assert.deepEqual(((await ready.json()) as { checks: Record<string, string> }).checks, {
        rabbitmq: 'ok',
        redis: 'ok',
        'redis-writes': 'ok',
        'outbox-relay': 'ok',
        'oslo-rpc': 'ok',
      });
      const client = await connectTestAmqp(vhost.url, 'process-test');
      for (const id of ids) {
        const body = encodeOsloBody({
          method: 'dhcp_ready_on_ports',
          args: { port_ids: [id] },
          version: '1.5',
          _unique_id: randomUUID().replaceAll('-', ''),
        });
        await client.publish('neutron', 'q-plugin', Buffer.from(body), {
          ...OSLO_MESSAGE_PROPERTIES,
          mandatory: true,
        });
      }
      await waitFor(
        'some requests handled',
        async () => (await stores.blocks.isObjectBlocked(ids[0]!, 'port')) === false,
      );
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      for (const name of [
        'lifeguard_provisioning_blocks_removed_total',
        'lifeguard_provisioning_completions_total',
        'lifeguard_provisioning_rpc_requests_total',
        'lifeguard_provisioning_outbox_depth',
        'lifeguard_provisioning_outbox_lag_seconds',
        'lifeguard_provisioning_outbox_published_total',
        'lifeguard_provisioning_duplicates_suppressed_total',
        'lifeguard_provisioning_port_status_transitions_total',
      ]) {
        assert.match(metrics, new RegExp(`# TYPE ${name} `), name);
      }
      service.child.kill('SIGTERM');
      const { code } = await service.exited();
      assert.equal(code, 0);
      assert.ok(service.lines.some((line) => line.msg === 'shutdown complete'));
      const handled = (await Promise.all(ids.map((id) => stores.blocks.isObjectBlocked(id, 'port')))).filter(
        (blocked) => !blocked,
      ).length;
      const waiting = await client.withChannel(
        async (channel) => (await channel.checkQueue('q-plugin')).messageCount,
      );
      assert.equal(handled + waiting, ids.length, 'every request was either handled or is still queued');
      await client.close();
    } finally {
      await service.kill();
    }
  });

  it('the port-status role runs on its own next to a service-role process, and together they turn ports ACTIVE', async () => {
    const prefix = randomKeyPrefix('roles');
    prefixes.push(prefix);
    const service = await startTestService(vhost.url, prefix, {
      LIFEGUARD_PROVISIONING_ROLE: 'service',
      LIFEGUARD_INSTANCE_NAME: 'rpc-side',
    });
    const portStatus = await startTestService(vhost.url, prefix, {
      LIFEGUARD_PROVISIONING_ROLE: 'port-status',
      LIFEGUARD_INSTANCE_NAME: 'status-side',
    });
    try {
      assert.equal(service.provisioning.subscriber, null);
      assert.equal(portStatus.provisioning.rpcServer, null);
      await seedNetwork(service.provisioning);
      const id = portUuid(1, 5);
      await service.provisioning.portProvisioning.create(computePort(id));
      await service.provisioning.callbacks.dhcpReadyOnPorts([id]);
      await service.provisioning.callbacks.updateDeviceUp({ device: id, host: 'compute-1' });
      await waitFor(
        'the port ACTIVE',
        async () => (await service.provisioning.ports.get(id))?.status === 'ACTIVE',
      );
    } finally {
      await portStatus.close();
      await service.close();
    }
  });
});
