import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REDIS_URL, waitFor } from '@lifeguard/testing';
import { RedisCutProxy } from './redis-cut-proxy.ts';
import {
  COMPUTE_HOST,
  EventCollector,
  type OsloOutcome,
  rabbitUrl,
  runOsloAgent,
  seedBlockedPorts,
  serviceProcessSuite,
  waitForEveryPortActive,
} from './support.ts';

const PORTS = 500;
const DEVICES_PER_CALL = 20;
const AGENTS = 5;

/**
 * The service is SIGKILLed while real oslo.messaging clients have `update_device_list` calls in
 * flight: some requests have taken effect in Redis but were neither replied to nor acknowledged. The
 * broker redelivers them (same `_unique_id` and `_msg_id`) to the restarted service, which must answer
 * the callers' original calls without completing a port a second time.
 */
describe('a request whose reply was lost with the service', () => {
  const suite = serviceProcessSuite('rpc-retry');
  const prefix = suite.keyPrefix('rpc-retry');

  it('is answered on redelivery with the first result: every call gets a reply, every port one provisioning.complete id', async () => {
    const { vhost, redis } = suite;
    const { stores, ids } = await seedBlockedPorts(redis, prefix, PORTS, 40);
    // The DHCP entity completes first, so each port's L2 completion is its last one and emits the event.
    await stores.callbacks.dhcpReadyOnPorts(ids);
    const collector = await EventCollector.start(vhost.url, 'test.rpc-retry.events', [
      'provisioning.complete.port',
    ]);
    // The first service reaches Redis through a proxy that stops answering right after the
    // completion of the first port of the first call went through: its effect is committed, its
    // reply and acknowledgement can never follow.
    const redisUrl = new URL(REDIS_URL);
    const proxy = await RedisCutProxy.start(
      { host: redisUrl.hostname, port: Number(redisUrl.port || 6379) },
      // ioredis sends a script with EVAL the first time on a connection, EVALSHA after: 'eval' matches both.
      ['eval', ids[0]!],
    );
    const proxiedRedisUrl = `redis://127.0.0.1:${proxy.port}${redisUrl.pathname}`;
    const environment = (instance: string, redisUrlOfInstance: string) => ({
      LIFEGUARD_REDIS_URL: redisUrlOfInstance,
      LIFEGUARD_AMQP_URL: vhost.url,
      LIFEGUARD_REDIS_KEY_PREFIX: prefix,
      LIFEGUARD_INSTANCE_NAME: instance,
      LIFEGUARD_PROVISIONING_RPC_SERVER: 'rpc-retry-host',
      LIFEGUARD_PROVISIONING_NOTIFY_NOVA_ON_PORT_STATUS_CHANGES: 'false',
      LIFEGUARD_PROVISIONING_OUTBOX_CLAIM_IDLE_SECONDS: '2',
      LIFEGUARD_PROVISIONING_RPC_PREFETCH: '4',
    });
    const first = suite.start(environment('rpc-retry-first', proxiedRedisUrl));
    await first.started();

    const calls: Array<Array<Record<string, unknown>>> = Array.from({ length: AGENTS }, () => []);
    for (let start = 0, call = 0; start < ids.length; start += DEVICES_PER_CALL, call++) {
      calls[call % AGENTS]!.push({
        kind: 'call',
        topic: 'q-plugin',
        method: 'update_device_list',
        version: '1.5',
        timeout: 90,
        args: {
          devices_up: ids.slice(start, start + DEVICES_PER_CALL),
          devices_down: [],
          agent_id: `ovs-agent-${call % AGENTS}`,
          host: COMPUTE_HOST,
        },
      });
    }
    const agents = calls.map((operations) =>
      runOsloAgent({ url: rabbitUrl(vhost.url), exchange: 'neutron', operations }),
    );
    await waitFor('the first port completed', () => proxy.hasCut, 60_000, 5);
    // Let the rest of the calls in flight commit their effects too, then kill.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await first.kill();
    assert.equal(first.child.signalCode, 'SIGKILL');
    await proxy.close();
    const completed = await Promise.all(
      ids.map(async (id) => (await stores.blocks.isObjectBlocked(id, 'port')) === false),
    );
    const completedBeforeRestart = completed.filter(Boolean).length;
    assert.ok(
      completedBeforeRestart >= 1 && completedBeforeRestart < PORTS,
      `${completedBeforeRestart} ports completed before the restart`,
    );

    const second = suite.start(environment('rpc-retry-second', REDIS_URL));
    await second.started();
    const outcomes: OsloOutcome[] = (await Promise.all(agents)).flat();
    assert.equal(outcomes.length, PORTS / DEVICES_PER_CALL);
    for (const outcome of outcomes) {
      assert.equal(outcome.ok, true, `a call failed: ${JSON.stringify(outcome)}`);
      const result = outcome.result as Record<string, unknown[]>;
      assert.equal(result.devices_up?.length, DEVICES_PER_CALL);
      assert.deepEqual(result.failed_devices_up, []);
    }
    await waitForEveryPortActive('every port ACTIVE', redis, stores, ids);
    await waitFor('the outbox drained', async () => (await redis.xlen(stores.keys.outbox)) === 0, 30_000);
    await waitFor(
      'an event for every port',
      () => new Set(collector.of('provisioning.complete').map((event) => event.data.objectId)).size === PORTS,
      30_000,
    );
    // Give a late duplicate the time to show up.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const eventIds = new Map<string, Set<string>>();
    for (const event of collector.of('provisioning.complete')) {
      const seen = eventIds.get(event.data.objectId) ?? new Set<string>();
      seen.add(event.id);
      eventIds.set(event.data.objectId, seen);
    }
    const twice = [...eventIds].filter(([, seen]) => seen.size > 1).map(([port]) => port);
    assert.deepEqual(twice, [], `${twice.length} ports completed twice (different event ids)`);
    second.child.kill('SIGTERM');
    assert.equal((await second.exited()).code, 0);
    await collector.close();
  });
});
