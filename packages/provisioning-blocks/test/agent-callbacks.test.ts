import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EventOf } from '@lifeguard/contracts';
import type { Redis } from 'ioredis';
import type { PortStatusSubscriber } from '../src/status/port-status-subscriber.ts';
import {
  COMPUTE_HOST,
  computePort,
  outboxEvents,
  portStatusSubscriberWithoutAmqp,
  portUuid,
  type Stores,
  seedStoresBeforeEachTest,
} from './support.ts';

/**
 * The server side of the agent RPCs (docs/neutron-provisioning-rules.md#neutrons-tests 21-22 and 24-29): what ML2's
 * RpcCallbacks and DhcpRpcCallback do with what the agents send.
 */
describe('agent RPC handlers (ML2 RpcCallbacks and DhcpRpcCallback semantics)', () => {
  let redis: Redis;
  let stores: Stores;
  let subscriber: PortStatusSubscriber;
  seedStoresBeforeEachTest('callbacks', (fresh) => {
    ({ redis, stores } = fresh);
    subscriber = portStatusSubscriberWithoutAmqp(stores.ports);
  });

  const blocksOf = (id: string) => stores.blocks.blockingEntities(id, 'port');
  const completions = async () =>
    (await outboxEvents(redis, stores.keys))
      .map((entry) => entry.parsed)
      .filter((event): event is EventOf<'provisioning.complete'> => event.type === 'provisioning.complete');
  /** Hands every completion event not yet handled to the subscriber. */
  const settle = async () => {
    for (const event of await completions()) await subscriber.handle(event);
  };

  it('update_device_up without a host completes the L2 entity (item 21)', async () => {
    const id = portUuid(1);
    await stores.portProvisioning.create(computePort(id));
    assert.equal((await stores.callbacks.updateDeviceUp({ device: id })).outcome, 'blocked');
    assert.deepEqual(await blocksOf(id), ['DHCP']);
  });

  it('update_device_up from a host the port is not bound to does not complete the block (item 22)', async () => {
    const id = portUuid(2);
    await stores.portProvisioning.create(computePort(id));
    assert.equal(
      (await stores.callbacks.updateDeviceUp({ device: id, host: 'compute-9' })).outcome,
      'not-bound-to-host',
    );
    assert.deepEqual(await blocksOf(id), ['DHCP', 'L2']);
  });

  it('update_device_down: bound here → DOWN and exists; bound elsewhere → untouched, exists; unknown → exists only when a host was given (item 24)', async () => {
    const id = portUuid(3);
    await stores.portProvisioning.create(computePort(id, { status: 'ACTIVE', fixed_ips: [] }));
    assert.deepEqual((await stores.callbacks.updateDeviceDown({ device: id, host: 'compute-9' })).result, {
      device: id,
      exists: true,
    });
    assert.equal((await stores.ports.get(id))?.status, 'ACTIVE');
    assert.deepEqual((await stores.callbacks.updateDeviceDown({ device: id, host: COMPUTE_HOST })).result, {
      device: id,
      exists: true,
    });
    assert.equal((await stores.ports.get(id))?.status, 'DOWN');
    const gone = portUuid(4);
    assert.deepEqual((await stores.callbacks.updateDeviceDown({ device: gone })).result, {
      device: gone,
      exists: false,
    });
    // As ML2: with a host, a missing port reads as "not bound to this host".
    assert.deepEqual((await stores.callbacks.updateDeviceDown({ device: gone, host: COMPUTE_HOST })).result, {
      device: gone,
      exists: true,
    });
    const mac = 'fa:16:3e:77:77:77';
    await stores.portProvisioning.create(computePort(portUuid(5), { mac_address: mac, fixed_ips: [] }));
    assert.deepEqual((await stores.callbacks.updateDeviceDown({ device: [mac, null] })).result, {
      device: mac,
      exists: true,
    });
  });

  it('update_device_list returns all four lists, with the devices whose call failed in the failed lists (item 25)', async () => {
    assert.deepEqual(await stores.callbacks.updateDeviceList({ devices_up: [], devices_down: [] }), {
      devices_up: [],
      failed_devices_up: [],
      devices_down: [],
      failed_devices_down: [],
    });
    const [good, broken, down] = [portUuid(6), portUuid(7), portUuid(8)];
    await stores.portProvisioning.create(computePort(good, { fixed_ips: [] }));
    await stores.portProvisioning.create(computePort(down, { status: 'ACTIVE', fixed_ips: [] }));
    // A corrupt record (not a hash) makes the call for that device fail in Redis.
    await redis.set(stores.keys.port(broken), 'corrupt');
    const result = await stores.callbacks.updateDeviceList({
      devices_up: [good, broken],
      devices_down: [down, broken],
      host: COMPUTE_HOST,
    });
    assert.deepEqual(result, {
      devices_up: [good],
      failed_devices_up: [broken],
      devices_down: [{ device: down, exists: true }],
      failed_devices_down: [broken],
    });
  });

  it('dhcp_ready_on_ports with ten ids completes the DHCP entity of each (item 26)', async () => {
    const ids = Array.from({ length: 10 }, (_, index) => portUuid(20 + index));
    for (const id of ids) await stores.portProvisioning.create(computePort(id, { 'binding:host_id': '' }));
    const { missing } = await stores.callbacks.dhcpReadyOnPorts([...ids, 'not-a-port']);
    assert.deepEqual(missing, ['not-a-port']);
    for (const id of ids) assert.deepEqual(await blocksOf(id), []);
    assert.equal((await completions()).length, 10);
  });

  it('a DHCP agent’s resync re-sending every cached port as ready changes no status: ACTIVE ports stay ACTIVE, nothing flaps (item 27)', async () => {
    const ids = Array.from({ length: 5 }, (_, index) => portUuid(40 + index));
    for (const id of ids) await stores.portProvisioning.create(computePort(id));
    await stores.callbacks.dhcpReadyOnPorts(ids);
    for (const id of ids) await stores.callbacks.updateDeviceUp({ device: id, host: COMPUTE_HOST });
    await settle();
    await stores.callbacks.dhcpReadyOnPorts(ids);
    await settle();
    for (const id of ids) assert.equal((await stores.ports.get(id))?.status, 'ACTIVE');
    const changes = (await outboxEvents(redis, stores.keys)).filter(
      (entry) => entry.type === 'port.status.changed',
    );
    assert.equal(changes.length, 5, 'one DOWN → ACTIVE per port, nothing more');
  });

  it('ids sent again after a timeout (a new request, same ids) are harmless (item 28)', async () => {
    const ids = [portUuid(50), portUuid(51)];
    for (const id of ids) await stores.portProvisioning.create(computePort(id));
    await stores.callbacks.dhcpReadyOnPorts(ids, 'req-first');
    await stores.callbacks.dhcpReadyOnPorts(ids, 'req-retry');
    for (const id of ids) assert.deepEqual(await blocksOf(id), ['L2']);
    assert.equal((await completions()).length, 0);
  });

  it('65 ports reported as 64 then 1 all complete (item 29: the DHCP agent’s batches)', async () => {
    const ids = Array.from({ length: 65 }, (_, index) => portUuid(100 + index));
    for (const id of ids) await stores.portProvisioning.create(computePort(id, { 'binding:host_id': '' }));
    await stores.callbacks.dhcpReadyOnPorts(ids.slice(0, 64));
    await stores.callbacks.dhcpReadyOnPorts(ids.slice(64));
    for (const id of ids) assert.deepEqual(await blocksOf(id), []);
    assert.equal((await completions()).length, 65);
  });
});
