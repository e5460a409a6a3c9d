import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitFor } from '@lifeguard/testing';
import type { ServiceProcess } from './service-process.ts';
import {
  completeFromTwoConnections,
  EventCollector,
  seedBlockedPorts,
  serviceProcessSuite,
  waitForEveryPortActive,
} from './support.ts';

const PORTS = 1000;

/**
 * The race Neutron loses (docs/neutron-provisioning-rules.md#races: 99.75 % of ports completed this
 * way never turn ACTIVE on MariaDB): the DHCP and the L2 completion of every port sent at the same
 * instant from two AMQP connections.
 */
describe('concurrent completions: exactly one transition per port', () => {
  const suite = serviceProcessSuite('concurrency');

  async function run(label: string, replicas: number): Promise<ServiceProcess[]> {
    const { vhost, redis } = suite;
    const prefix = suite.keyPrefix(label);
    const { stores, ids } = await seedBlockedPorts(redis, prefix, PORTS, 20 + replicas);
    const collector = await EventCollector.start(vhost.url, `test.${label}.events`, [
      'provisioning.complete.port',
      'port.status.changed',
    ]);
    const started = Array.from({ length: replicas }, (_, index) =>
      suite.start({
        LIFEGUARD_AMQP_URL: vhost.url,
        LIFEGUARD_REDIS_KEY_PREFIX: prefix,
        LIFEGUARD_INSTANCE_NAME: `${label}-${index}`,
        LIFEGUARD_PROVISIONING_RPC_SERVER: `${label}-${index}`,
        LIFEGUARD_PROVISIONING_NOTIFY_NOVA_ON_PORT_STATUS_CHANGES: 'false',
      }),
    );
    await Promise.all(started.map((service) => service.started()));
    try {
      await completeFromTwoConnections(vhost.url, ids);
      await waitForEveryPortActive('every port ACTIVE', redis, stores, ids);
      await waitFor(
        '1000 status changes received',
        () => collector.of('port.status.changed').length >= PORTS,
        30_000,
      );
      const completions = collector.of('provisioning.complete');
      const changes = collector.of('port.status.changed');
      assert.equal(completions.length, PORTS, 'exactly one provisioning.complete per port');
      assert.equal(new Set(completions.map((event) => event.data.objectId)).size, PORTS);
      assert.equal(changes.length, PORTS, 'exactly one status transition per port');
      assert.ok(
        changes.every((event) => event.data.previousStatus === 'DOWN' && event.data.status === 'ACTIVE'),
      );
      // The relay trims an entry after the broker's confirm, which can come after the event arrived here.
      await waitFor('the outbox trimmed', async () => (await redis.xlen(stores.keys.outbox)) === 0, 30_000);
      return started;
    } finally {
      await collector.close();
    }
  }

  it('1,000 ports, one service: exactly 1,000 provisioning.complete transitions and every port ACTIVE', async () => {
    const [service] = await run('one-replica', 1);
    service!.child.kill('SIGTERM');
    assert.equal((await service!.exited()).code, 0);
  });

  it('1,000 ports, two service replicas on the same queues: exactly 1,000 transitions, every port ACTIVE, both replicas worked', async () => {
    const replicas = await run('two-replicas', 2);
    for (const service of replicas) {
      const port = Number(
        service.lines.find((line) => line.msg === 'health and metrics server listening')?.port,
      );
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      const handled = [
        ...metrics.matchAll(
          /lifeguard_provisioning_rpc_requests_total\{method="[a-z_]+",outcome="ok"[^}]*\} (\d+)/g,
        ),
      ]
        .map((match) => Number(match[1]))
        .reduce((sum, value) => sum + value, 0);
      assert.ok(handled > 0, 'each replica handled a share of the requests');
      service.child.kill('SIGTERM');
      assert.equal((await service.exited()).code, 0);
    }
  });
});
