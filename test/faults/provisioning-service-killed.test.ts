import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REDIS_URL, waitFor } from '@lifeguard/testing';
import { RedisCutProxy } from '../../packages/provisioning-blocks/test/redis-cut-proxy.ts';
import {
  COMPUTE_HOST,
  completeFromTwoConnections,
  rabbitUrl,
  runOsloAgent,
  seedBlockedPorts,
  serviceProcessSuite,
  waitForEveryPortActive,
} from '../../packages/provisioning-blocks/test/support.ts';
import { recordFaultRow } from './support/fault-table.ts';
import { whenMetricExceeds } from './support/metrics.ts';
import { CompletionRecorder, countCompletions } from './support/provisioning-events.ts';

const STREAM_PORTS = 1000;
const REPLY_LOST_PORTS = 500;
const DEVICES_PER_CALL = 20;
const AGENTS = 5;

/**
 * The provisioning service SIGKILLed while agents complete ports (docs/failure-modes.md#brokers):
 * nothing it acknowledged is lost, no port's completion is emitted twice with different ids, and the
 * agents' calls whose reply died with it are answered by the restarted service with their first
 * result.
 */
describe('the provisioning service killed mid stream', () => {
  const suite = serviceProcessSuite('fault-pb-killed');
  const environment = (prefix: string, instance: string, redisUrl = REDIS_URL) => ({
    LIFEGUARD_REDIS_URL: redisUrl,
    LIFEGUARD_AMQP_URL: suite.vhost.url,
    LIFEGUARD_REDIS_KEY_PREFIX: prefix,
    LIFEGUARD_INSTANCE_NAME: instance,
    LIFEGUARD_PROVISIONING_RPC_SERVER: 'fault-host',
    LIFEGUARD_PROVISIONING_NOTIFY_NOVA_ON_PORT_STATUS_CHANGES: 'false',
    LIFEGUARD_PROVISIONING_OUTBOX_CLAIM_IDLE_SECONDS: '2',
  });

  it(`SIGKILL during ${STREAM_PORTS} ports' completions: every port ends ACTIVE, each provisioning.complete under one id`, async () => {
    const prefix = suite.keyPrefix('fault-pb-killed');
    const { stores, ids } = await seedBlockedPorts(suite.redis, prefix, STREAM_PORTS, 50);
    const recorder = await CompletionRecorder.start(suite.vhost.url, 'fault.pb-killed.completions');
    const first = suite.start(environment(prefix, 'fault-pb-first'));
    const firstPort = await first.started(300_000);
    let completedBeforeKill = 0;
    try {
      await completeFromTwoConnections(suite.vhost.url, ids, {
        chunk: 50,
        beforeChunk: async (sent) => {
          if (completedBeforeKill > 0 || sent < STREAM_PORTS / 2) return;
          // Half the completions are sent: once the service has visibly published, kill it.
          await whenMetricExceeds(firstPort, 'lifeguard_provisioning_outbox_published_total', 50);
          await first.kill();
          completedBeforeKill = (
            await Promise.all(ids.map((id) => stores.blocks.isObjectBlocked(id, 'port')))
          ).filter((blocked) => !blocked).length;
        },
      });
    } finally {
      await first.kill();
    }
    assert.equal(first.child.signalCode, 'SIGKILL');
    assert.ok(completedBeforeKill > 0 && completedBeforeKill < STREAM_PORTS, `${completedBeforeKill} before`);

    const restartedAt = Date.now();
    const second = suite.start(environment(prefix, 'fault-pb-second'));
    const secondPort = await second.started(300_000);
    const resumedAt = await whenMetricExceeds(secondPort, 'lifeguard_provisioning_outbox_published_total', 0);
    await waitForEveryPortActive('every port ACTIVE after the restart', suite.redis, stores, ids);
    await waitFor(
      'the outbox drained',
      async () => (await suite.redis.xlen(stores.keys.outbox)) === 0,
      60_000,
    );
    const counted = countCompletions(ids, await recorder.drain());
    recordFaultRow({
      fault: 'provisioning service SIGKILLed mid stream',
      inFlight: `${STREAM_PORTS} ports (${completedBeforeKill} completed before the kill)`,
      eventsLost: counted.lost,
      duplicateEffects: counted.duplicated,
      secondsToResume: resumedAt === null ? null : (resumedAt - restartedAt) / 1000,
      outcome: `every port ACTIVE; ${counted.deliveries} deliveries for ${STREAM_PORTS} events (redeliveries keep their id)`,
    });
    assert.equal(counted.lost, 0, 'ports without a provisioning.complete event');
    assert.equal(counted.duplicated, 0, 'ports completed twice under different event ids');
    second.child.kill('SIGTERM');
    assert.equal((await second.exited()).code, 0);
  });

  it(`the reply lost with the service (SIGKILL during ${REPLY_LOST_PORTS} completions by oslo.messaging calls): every call answered with its first result, one event id per port`, async () => {
    const prefix = suite.keyPrefix('fault-pb-reply');
    const { stores, ids } = await seedBlockedPorts(suite.redis, prefix, REPLY_LOST_PORTS, 51);
    // The DHCP entity completes first, so each port's L2 completion is its last and emits the event.
    await stores.callbacks.dhcpReadyOnPorts(ids);
    const recorder = await CompletionRecorder.start(suite.vhost.url, 'fault.pb-reply.completions');
    // The first service reaches Redis through a proxy that goes silent right after the first port's
    // completion went through: that request's effect is committed, its reply can never be sent.
    const redisUrl = new URL(REDIS_URL);
    const proxy = await RedisCutProxy.start({ host: redisUrl.hostname, port: Number(redisUrl.port) }, [
      'eval',
      ids[0]!,
    ]);
    const first = suite.start({
      ...environment(prefix, 'fault-reply-first', `redis://127.0.0.1:${proxy.port}${redisUrl.pathname}`),
      LIFEGUARD_PROVISIONING_RPC_PREFETCH: '4',
    });
    await first.started(300_000);
    const calls: Array<Array<Record<string, unknown>>> = Array.from({ length: AGENTS }, () => []);
    for (let start = 0, call = 0; start < ids.length; start += DEVICES_PER_CALL, call++) {
      calls[call % AGENTS]!.push({
        kind: 'call',
        topic: 'q-plugin',
        method: 'update_device_list',
        version: '1.5',
        timeout: 240,
        args: {
          devices_up: ids.slice(start, start + DEVICES_PER_CALL),
          devices_down: [],
          agent_id: `ovs-agent-${call % AGENTS}`,
          host: COMPUTE_HOST,
        },
      });
    }
    const agents = calls.map((operations) =>
      runOsloAgent({ url: rabbitUrl(suite.vhost.url), exchange: 'neutron', operations }, 600_000),
    );
    await waitFor('the first port completed', () => proxy.hasCut, 120_000, 5);
    // Let the other requests in flight commit their effects too, then kill.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await first.kill();
    await proxy.close();
    const completedBeforeRestart = (
      await Promise.all(ids.map((id) => stores.blocks.isObjectBlocked(id, 'port')))
    ).filter((blocked) => !blocked).length;
    assert.ok(completedBeforeRestart >= 1, `${completedBeforeRestart} ports completed before the restart`);

    const restartedAt = Date.now();
    const second = suite.start({
      ...environment(prefix, 'fault-reply-second'),
      LIFEGUARD_PROVISIONING_RPC_PREFETCH: '4',
    });
    const secondPort = await second.started(300_000);
    const resumedAt = await whenMetricExceeds(secondPort, 'lifeguard_provisioning_rpc_requests_total', 0);
    const outcomes = (await Promise.all(agents)).flat();
    const failedCalls = outcomes.filter((outcome) => !outcome.ok);
    await waitForEveryPortActive('every port ACTIVE', suite.redis, stores, ids);
    await waitFor(
      'the outbox drained',
      async () => (await suite.redis.xlen(stores.keys.outbox)) === 0,
      60_000,
    );
    const counted = countCompletions(ids, await recorder.drain());
    recordFaultRow({
      fault: "reply to an agent's RPC call lost (service SIGKILLed after the effect)",
      inFlight: `${REPLY_LOST_PORTS} ports, ${outcomes.length} update_device_list calls (${completedBeforeRestart} ports done before the kill)`,
      eventsLost: counted.lost,
      duplicateEffects: counted.duplicated,
      secondsToResume: resumedAt === null ? null : (resumedAt - restartedAt) / 1000,
      outcome: `${outcomes.length - failedCalls.length} of ${outcomes.length} calls answered, redelivered requests answered with their first result`,
    });
    assert.deepEqual(failedCalls, [], 'calls that failed');
    for (const outcome of outcomes) {
      const result = outcome.result as Record<string, unknown[]>;
      assert.equal(result.devices_up?.length, DEVICES_PER_CALL);
      assert.deepEqual(result.failed_devices_up, []);
    }
    assert.equal(counted.lost, 0, 'ports without a provisioning.complete event');
    assert.equal(counted.duplicated, 0, 'ports completed twice under different event ids');
    second.child.kill('SIGTERM');
    assert.equal((await second.exited()).code, 0);
  });
});
