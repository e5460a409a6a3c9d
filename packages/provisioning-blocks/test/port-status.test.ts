import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createEvent, type EventOf, eventRoutingKey, LifeguardEvent } from '@lifeguard/contracts';
import { sleep } from '@lifeguard/testing';
import type { Redis } from 'ioredis';
import type { PortStatusSubscriber } from '../src/status/port-status-subscriber.ts';
import {
  COMPUTE_HOST,
  computePort,
  outboxEvents,
  portStatusSubscriberWithoutAmqp,
  portUuid,
  SOURCE,
  type Stores,
  seedStoresBeforeEachTest,
} from './support.ts';

/**
 * ML2's provisioning_complete subscriber (docs/neutron-provisioning-rules.md#active-after-provisioning), fed the events the block store emits.
 * Items 11-15 of A.5.1 and bug scenarios 1, 2, 3 and 6 of A.5.2.
 */
describe('port-status subscriber: when a port may turn ACTIVE (docs/neutron-provisioning-rules.md#active-after-provisioning)', () => {
  let redis: Redis;
  let stores: Stores;
  let subscriber: PortStatusSubscriber;
  seedStoresBeforeEachTest('status', (fresh) => {
    ({ redis, stores } = fresh);
    subscriber = portStatusSubscriberWithoutAmqp(stores.ports, { unboundRetryMilliseconds: 50 });
  });

  const status = async (portId: string) => (await stores.ports.get(portId))?.status;
  const statusChanges = async (portId: string) =>
    (await outboxEvents(redis, stores.keys))
      .map((entry) => entry.parsed)
      .filter((event): event is EventOf<'port.status.changed'> => event.type === 'port.status.changed')
      .filter((event) => event.data.portId === portId);
  /** Completes `entity` and hands the event, if one was emitted, to the subscriber. */
  const complete = async (portId: string, entity: string) => {
    const result = await stores.blocks.provisioningComplete(portId, 'port', entity);
    return result.event ? subscriber.handle(result.event) : null;
  };

  it('a port with a DHCP and an L2 block stays DOWN when the L2 agent reports first, turns ACTIVE on DHCP ready, once (bug 1, 1453350)', async () => {
    const id = portUuid(1);
    await stores.portProvisioning.create(computePort(id));
    assert.equal(await complete(id, 'L2'), null, 'no event while the DHCP block remains');
    assert.equal(await status(id), 'DOWN');
    assert.equal(await complete(id, 'DHCP'), 'activated');
    assert.equal(await status(id), 'ACTIVE');
    const changes = await statusChanges(id);
    assert.equal(changes.length, 1);
    assert.deepEqual([changes[0]!.data.previousStatus, changes[0]!.data.status], ['DOWN', 'ACTIVE']);
    assert.equal(changes[0]!.data.deviceOwner, 'compute:nova');
  });

  it('a block added after the completion, before the handler runs, keeps the port from ACTIVE: no flap (item 11; bug 2, 1600396)', async () => {
    const id = portUuid(2);
    await stores.portProvisioning.create(
      computePort(id, { 'binding:host_id': '', 'binding:vif_type': 'unbound' }),
    );
    const dhcp = await stores.blocks.provisioningComplete(id, 'port', 'DHCP');
    assert.equal(dhcp.outcome, 'emitted');
    await stores.portProvisioning.update(id, { 'binding:host_id': COMPUTE_HOST, 'binding:vif_type': 'ovs' });
    assert.equal(await subscriber.handle(dhcp.event!), 'blocked');
    assert.equal(await status(id), 'DOWN');
    assert.equal(await complete(id, 'L2'), 'activated');
    const changes = await statusChanges(id);
    assert.deepEqual(
      changes.map((event) => `${event.data.previousStatus}->${event.data.status}`),
      ['DOWN->ACTIVE'],
    );
  });

  it('a port that has no binding, or was deleted while the handler ran, is left quietly (item 12; bug 3, 1599643)', async () => {
    const id = portUuid(3);
    await stores.portProvisioning.create(
      computePort(id, { device_owner: 'network:dhcp', 'binding:vif_type': 'unbound' }),
    );
    assert.equal(await complete(id, 'DHCP'), 'unbound');
    const gone = portUuid(4);
    await stores.portProvisioning.create(computePort(gone));
    await stores.blocks.provisioningComplete(gone, 'port', 'DHCP');
    const event = (await stores.blocks.provisioningComplete(gone, 'port', 'L2')).event!;
    await stores.portProvisioning.delete(gone);
    assert.equal(await subscriber.handle(event), 'missing');
    assert.equal(await stores.ports.get(gone), null);
  });

  it('an admin-down port is never set ACTIVE (item 13; bug 6, 1757089)', async () => {
    const id = portUuid(5);
    await stores.portProvisioning.create(computePort(id, { admin_state_up: false }));
    await stores.callbacks.updateDeviceUp({ device: id, host: COMPUTE_HOST });
    await stores.callbacks.updateDeviceDown({ device: id, host: COMPUTE_HOST });
    assert.equal(await complete(id, 'DHCP'), 'admin_down');
    assert.equal(await status(id), 'DOWN');
    assert.equal((await statusChanges(id)).length, 0);
  });

  it('a compute port first seen unbound and bound on a retry turns ACTIVE once (item 14; bugs 1988199, 1991092)', async () => {
    const id = portUuid(6);
    await stores.portProvisioning.create(computePort(id, { 'binding:vif_type': 'unbound' }));
    await stores.blocks.provisioningComplete(id, 'port', 'DHCP');
    const event = (await stores.blocks.provisioningComplete(id, 'port', 'L2')).event!;
    const handled = subscriber.handle(event);
    await sleep(120);
    await stores.portProvisioning.update(id, { 'binding:vif_type': 'ovs' });
    assert.equal(await handled, 'activated');
    assert.equal((await statusChanges(id)).length, 1);
  });

  it('a compute port still unbound after 10 looks is left alone; a non-compute unbound port is not retried (items 14, 15)', async () => {
    const compute = portUuid(7);
    await stores.portProvisioning.create(
      computePort(compute, { 'binding:vif_type': 'unbound', fixed_ips: [] }),
    );
    const started = Date.now();
    assert.equal(await complete(compute, 'L2'), 'unbound');
    assert.ok(Date.now() - started >= 9 * 50, 'looked 10 times, 50 ms apart');
    const router = portUuid(8);
    await stores.portProvisioning.create(
      computePort(router, { device_owner: 'network:router_interface', 'binding:vif_type': 'unbound' }),
    );
    const quick = Date.now();
    assert.equal(await complete(router, 'L2'), 'unbound');
    assert.ok(Date.now() - quick < 50, 'no retry for a non-compute port');
    assert.equal(await status(compute), 'DOWN');
  });

  it('a binding_failed port is not set ACTIVE', async () => {
    const id = portUuid(9);
    await stores.portProvisioning.create(
      computePort(id, { 'binding:vif_type': 'binding_failed', fixed_ips: [] }),
    );
    assert.equal(await complete(id, 'L2'), 'binding_failed');
  });

  it('router interface and DHCP ports get no blocks and go ACTIVE on L2 up (bug 4)', async () => {
    for (const [index, owner] of [
      [10, 'network:router_interface'],
      [11, 'network:dhcp'],
    ] as const) {
      const id = portUuid(index);
      await stores.portProvisioning.create(computePort(id, { device_owner: owner, device_id: 'router-1' }));
      assert.deepEqual(await stores.blocks.blockingEntities(id, 'port'), []);
      await stores.callbacks.updateDeviceUp({ device: id, host: COMPUTE_HOST });
      const [entry] = (await outboxEvents(redis, stores.keys)).filter(
        (each) => each.parsed.type === 'provisioning.complete' && each.parsed.data.objectId === id,
      );
      assert.equal(await subscriber.handle(entry!.parsed as EventOf<'provisioning.complete'>), 'activated');
    }
  });

  it('each event id is handled once; a repeated completion carries the same id, and an event with another id finds the port ACTIVE already', async () => {
    const id = portUuid(12);
    await stores.portProvisioning.create(computePort(id, { fixed_ips: [] }));
    const event = (await stores.blocks.provisioningComplete(id, 'port', 'L2')).event!;
    assert.equal(await subscriber.handle(event), 'activated');
    assert.equal(await subscriber.handle(event), 'duplicate');
    assert.equal(
      await complete(id, 'L2'),
      'duplicate',
      'an agent’s repeated completion: the same transition',
    );
    const another = createEvent(
      'provisioning.complete',
      { objectType: 'port', objectId: id, entity: 'L2' },
      SOURCE,
    );
    assert.equal(await subscriber.handle(another), 'already_active');
    assert.equal((await statusChanges(id)).length, 1);
  });

  it('a port being live-migrated turns ACTIVE without telling Nova when DHCP completes, and telling it when L2 does (A.4.1)', async () => {
    // Bound on a host without an agent: no L2 block, so either completion finds the port unblocked.
    const migrating = {
      'binding:profile': { migrating_to: 'compute-2' },
      'binding:host_id': 'compute-9',
      fixed_ips: [],
    };
    const byDhcp = portUuid(13);
    await stores.portProvisioning.create(computePort(byDhcp, migrating));
    const event = createEvent(
      'provisioning.complete',
      { objectType: 'port', objectId: byDhcp, entity: 'DHCP' },
      SOURCE,
    );
    assert.equal(await subscriber.handle(event), 'activated');
    const byL2 = portUuid(14);
    await stores.portProvisioning.create(computePort(byL2, migrating));
    assert.equal(await complete(byL2, 'L2'), 'activated');
    assert.equal((await statusChanges(byDhcp))[0]?.data.notifyNova, false);
    assert.equal((await statusChanges(byL2))[0]?.data.notifyNova, true);
  });

  it('every event the Lua scripts write satisfies the contracts (provisioning.complete, port.status.changed, port.vif.plugged)', async () => {
    const id = portUuid(15);
    await stores.portProvisioning.create(computePort(id, { fixed_ips: [] }));
    await stores.callbacks.updateDeviceUp({ device: id, host: 'compute-elsewhere' }, 'req-vif');
    const completed = await stores.callbacks.updateDeviceUp(
      { device: id, host: COMPUTE_HOST },
      'req-complete',
    );
    assert.equal(completed.outcome, 'emitted');
    const [complete] = (await outboxEvents(redis, stores.keys)).filter(
      (entry) => entry.type === 'provisioning.complete',
    );
    await subscriber.handle(complete!.parsed as EventOf<'provisioning.complete'>);
    await stores.callbacks.updateDeviceDown({ device: id, host: COMPUTE_HOST });
    const entries = await outboxEvents(redis, stores.keys);
    assert.deepEqual(
      entries.map((entry) => entry.type),
      ['port.vif.plugged', 'provisioning.complete', 'port.status.changed', 'port.status.changed'],
    );
    for (const entry of entries) {
      const event = LifeguardEvent.parse(entry.parsed);
      assert.deepEqual(
        [entry.id, entry.type, entry.routingKey],
        [event.id, event.type, eventRoutingKey(event)],
      );
      assert.equal(entry.occurredAt, event.occurredAt);
    }
    assert.deepEqual(entries[0]!.parsed.data, {
      portId: id,
      deviceId: computePort(id).device_id,
      deviceOwner: 'compute:nova',
      host: 'compute-elsewhere',
      boundHost: COMPUTE_HOST,
    });
    assert.equal(
      entries[1]!.parsed.type === 'provisioning.complete' && entries[1]!.parsed.data.requestId,
      'req-complete',
    );
  });
});
