import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { createProvisioningMetrics } from '../src/metrics.ts';
import { StuckPortReconciler } from '../src/reconcile/stuck-port-reconciler.ts';
import {
  COMPUTE_HOST,
  computePort,
  outboxEvents,
  portStatusSubscriberWithoutAmqp,
  portUuid,
  type Stores,
  seedStoresBeforeEachTest,
  testLogger,
} from './support.ts';

const MINUTE = 60_000;

/**
 * The stuck-port reconciler on real Redis: ports whose last block went but that never became ACTIVE
 * (their provisioning.complete was never handled, as after a lost event) are set ACTIVE after the
 * configured wait; ports that cannot be are reported with the reason; ports blocked by a silent agent
 * are reported, never completed.
 */
describe('stuck-port reconciler', () => {
  let stores: Stores;
  let redis: Parameters<Parameters<typeof seedStoresBeforeEachTest>[1]>[0]['redis'];
  seedStoresBeforeEachTest('stuck', (fresh) => {
    ({ stores, redis } = fresh);
  });

  const reconciler = (overrides: { afterSeconds?: number; now?: () => number } = {}) => {
    const registry = new Registry();
    return {
      registry,
      reconciler: new StuckPortReconciler({
        redis,
        keys: stores.keys,
        ports: stores.ports,
        agents: stores.agents,
        l2AgentTypes: ['Open vSwitch agent'],
        intervalSeconds: 60,
        afterSeconds: overrides.afterSeconds ?? 0,
        deadAgentSeconds: 300,
        logger: testLogger,
        metrics: createProvisioningMetrics(registry),
        ...(overrides.now ? { now: overrides.now } : {}),
      }),
    };
  };
  const status = async (portId: string) => (await stores.ports.get(portId))?.status;
  /** Completes both entities of a port; its provisioning.complete stays in the outbox, never handled. */
  const completeWithoutSubscriber = async (portId: string) => {
    await stores.callbacks.dhcpReadyOnPorts([portId]);
    await stores.callbacks.updateDeviceUp({ device: portId, host: COMPUTE_HOST });
  };

  it('sets ACTIVE a port whose last block went but whose event was never handled, once the wait is over, and Nova hears of it', async () => {
    const port = portUuid(1, 60);
    await stores.portProvisioning.create(computePort(port));
    await completeWithoutSubscriber(port);
    assert.equal(await status(port), 'DOWN');
    const early = await reconciler({ afterSeconds: 60 }).reconciler.runOnce();
    assert.deepEqual(early.activated, [], 'not before LIFEGUARD_PROVISIONING_RECONCILE_AFTER_SECONDS');
    assert.equal(await status(port), 'DOWN');

    const { reconciler: late, registry } = reconciler({
      now: () => Date.now() + 2 * MINUTE,
      afterSeconds: 60,
    });
    const round = await late.runOnce();
    assert.deepEqual(round.activated, [port]);
    assert.equal(await status(port), 'ACTIVE');
    const changed = (await outboxEvents(redis, stores.keys)).filter(
      (entry) => entry.parsed.type === 'port.status.changed',
    );
    assert.equal(changed.length, 1);
    assert.deepEqual(
      { ...changed[0]!.parsed.data, deviceId: undefined },
      { ...changed[0]!.parsed.data, deviceId: undefined, portId: port, status: 'ACTIVE' },
    );
    assert.match(await registry.metrics(), /reconciled_ports_total\{outcome="activated"\} 1/);
    assert.equal(await redis.zcard(stores.keys.portsAwaitingActive), 0, 'no longer awaiting');
    assert.deepEqual((await late.runOnce()).activated, [], 'done once');
  });

  it('leaves alone a port the subscriber set ACTIVE, and a DOWN port that never had its blocks completed', async () => {
    const handled = portUuid(2, 60);
    const neverCompleted = portUuid(3, 60);
    await stores.portProvisioning.create(computePort(handled));
    await stores.portProvisioning.create(computePort(neverCompleted));
    await completeWithoutSubscriber(handled);
    const completion = (await outboxEvents(redis, stores.keys)).find(
      (entry) => entry.parsed.type === 'provisioning.complete',
    );
    assert.ok(completion);
    const subscriber = portStatusSubscriberWithoutAmqp(stores.ports);
    await subscriber.handle(completion.parsed as Parameters<typeof subscriber.handle>[0]);
    assert.equal(await status(handled), 'ACTIVE');
    assert.equal(await redis.zcard(stores.keys.portsAwaitingActive), 0, 'the subscriber took it off');
    const round = await reconciler().reconciler.runOnce();
    assert.deepEqual(round.activated, []);
    assert.equal(await status(neverCompleted), 'DOWN');
  });

  it('reports, and does not set ACTIVE, a completed port that is unbound or administratively down', async () => {
    const unbound = portUuid(4, 60);
    const adminDown = portUuid(5, 60);
    await stores.portProvisioning.create(computePort(unbound, { 'binding:vif_type': 'unbound' }));
    await stores.portProvisioning.create(computePort(adminDown, { admin_state_up: false }));
    await completeWithoutSubscriber(unbound);
    await completeWithoutSubscriber(adminDown);
    const { reconciler: round, registry } = reconciler();
    const found = await round.runOnce();
    assert.deepEqual(found.activated, []);
    assert.deepEqual(found.stuck.unbound, [unbound]);
    assert.deepEqual(found.stuck.admin_down, [adminDown]);
    assert.equal(await status(unbound), 'DOWN');
    assert.equal(await status(adminDown), 'DOWN');
    const metrics = await registry.metrics();
    assert.match(metrics, /stuck_ports\{reason="unbound"\} 1/);
    assert.match(metrics, /stuck_ports\{reason="admin_down"\} 1/);
  });

  it('reports ports blocked by agents silent for longer than the configured time, and only then', async () => {
    const blocked = portUuid(6, 60);
    const l2Only = portUuid(7, 60);
    await stores.portProvisioning.create(computePort(blocked));
    await stores.portProvisioning.create(computePort(l2Only));
    await stores.callbacks.dhcpReadyOnPorts([l2Only]);
    const fresh = await reconciler().reconciler.runOnce();
    assert.deepEqual(fresh.stuck.l2_agent_dead, []);
    assert.deepEqual(fresh.stuck.dhcp_agent_dead, []);

    // Ten minutes later without a heartbeat (dead after 300 s).
    const { reconciler: later, registry } = reconciler({ now: () => Date.now() + 10 * MINUTE });
    const silent = await later.runOnce();
    assert.deepEqual(silent.stuck.l2_agent_dead.sort(), [blocked, l2Only].sort());
    assert.deepEqual(silent.stuck.dhcp_agent_dead, [blocked]);
    assert.deepEqual(silent.activated, []);
    assert.equal(await status(blocked), 'DOWN', 'reported, never completed');
    assert.deepEqual(await stores.blocks.blockingEntities(blocked, 'port'), ['DHCP', 'L2']);
    assert.match(await registry.metrics(), /stuck_ports\{reason="l2_agent_dead"\} 2/);
  });
});
