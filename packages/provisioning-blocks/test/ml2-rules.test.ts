import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { NO_PROVISIONING_BLOCK_DEVICE_OWNERS, Port } from '@lifeguard/contracts';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis } from '@lifeguard/testing';
import type { Redis } from 'ioredis';
import {
  COMPUTE_HOST,
  computePort,
  createStores,
  DHCP_HOST,
  NETWORK_ID,
  outboxEvents,
  portUuid,
  type Stores,
  SUBNET_ID,
  seedNetwork,
} from './support.ts';

describe('ML2 provisioning-block rules (docs/neutron-provisioning-rules.md#neutrons-tests 16-20, #bug-scenarios 4, 5, 7, 10)', () => {
  let redis: Redis;
  let stores: Stores;
  const prefixes: string[] = [];
  let clock = Date.now();

  before(() => {
    redis = testRedis();
  });
  beforeEach(async () => {
    const prefix = randomKeyPrefix('ml2');
    prefixes.push(prefix);
    clock = Date.now();
    stores = createStores(redis, prefix, { now: () => clock });
    await seedNetwork(stores);
  });
  after(async () => {
    for (const prefix of prefixes) await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  const blocksOf = (portId: string) => stores.blocks.blockingEntities(portId, 'port');
  const plainPort = (id: string, fields: Partial<Port> = {}) =>
    Port.parse({
      id,
      network_id: NETWORK_ID,
      device_owner: 'fake:test',
      fixed_ips: [{ subnet_id: SUBNET_ID, ip_address: '10.0.0.5' }],
      mac_address: 'fa:16:3e:00:00:01',
      ...fields,
    });

  it('creating a port (owner fake:test) on a network a DHCP agent hosts adds a DHCP block (item 16)', async () => {
    const change = await stores.portProvisioning.create(plainPort('p16'));
    assert.deepEqual(change.blocksAdded, ['DHCP']);
    assert.deepEqual(await blocksOf('p16'), ['DHCP']);
  });

  it('a port on a subnet with DHCP disabled gets no DHCP block (item 17)', async () => {
    await stores.records.createSubnet({
      id: 'no-dhcp',
      network_id: NETWORK_ID,
      cidr: '10.1.0.0/24',
      enable_dhcp: false,
    });
    await stores.portProvisioning.create(plainPort('p17', { fixed_ips: [{ subnet_id: 'no-dhcp' }] }));
    assert.deepEqual(await blocksOf('p17'), []);
  });

  it('an update changing only binding:host_id adds no DHCP block; one changing host and MAC adds it (item 18)', async () => {
    await stores.records.removeDhcpAgentFromNetwork(NETWORK_ID, DHCP_HOST);
    await stores.portProvisioning.create(plainPort('p18'));
    assert.deepEqual(await blocksOf('p18'), []);
    await stores.records.addDhcpAgentToNetwork(NETWORK_ID, DHCP_HOST);
    await stores.portProvisioning.update('p18', { 'binding:host_id': COMPUTE_HOST });
    assert.deepEqual(await blocksOf('p18'), ['L2']);
    await stores.portProvisioning.update('p18', {
      'binding:host_id': 'compute-9',
      mac_address: 'fa:16:3e:00:00:99',
    });
    assert.deepEqual(await blocksOf('p18'), ['DHCP', 'L2']);
  });

  it('without a DHCP agent a new port gets no DHCP block, and an address change clears a stale one without an event (item 19)', async () => {
    await stores.portProvisioning.create(plainPort('p19'));
    assert.deepEqual(await blocksOf('p19'), ['DHCP']);
    await stores.records.removeDhcpAgentFromNetwork(NETWORK_ID, DHCP_HOST);
    await stores.portProvisioning.create(plainPort('p19-new'));
    assert.deepEqual(await blocksOf('p19-new'), []);
    const change = await stores.portProvisioning.update('p19', {
      fixed_ips: [{ subnet_id: SUBNET_ID, ip_address: '10.0.0.6' }],
    });
    assert.deepEqual(change.blocksRemoved, ['DHCP']);
    assert.deepEqual(await blocksOf('p19'), []);
    assert.equal((await outboxEvents(redis, stores.keys)).length, 0);
  });

  it('no port whose owner is in NO_PBLOCKS_TYPES gets a DHCP or an L2 block, nor loses one (item 20; bugs 1590845, 1605955, 1930432)', async () => {
    let index = 0;
    for (const owner of NO_PROVISIONING_BLOCK_DEVICE_OWNERS) {
      const id = `service-port-${index++}`;
      await stores.portProvisioning.create(
        plainPort(id, { device_owner: owner, 'binding:host_id': COMPUTE_HOST }),
      );
      assert.deepEqual(await blocksOf(id), [], `owner "${owner}"`);
      await stores.blocks.addProvisioningComponent(id, 'port', 'DHCP');
      await stores.portProvisioning.update(id, {
        fixed_ips: [{ subnet_id: SUBNET_ID, ip_address: '10.0.9.9' }],
      });
      assert.deepEqual(await blocksOf(id), ['DHCP'], `owner "${owner}" kept its block`);
    }
  });

  it('with enable_traditional_dhcp off no DHCP block is added', async () => {
    const prefix = randomKeyPrefix('ml2-nodhcp');
    prefixes.push(prefix);
    const noDhcp = createStores(redis, prefix, { enableTraditionalDhcp: false });
    await seedNetwork(noDhcp);
    await noDhcp.portProvisioning.create(plainPort('p-nodhcp'));
    assert.deepEqual(await noDhcp.blocks.blockingEntities('p-nodhcp', 'port'), []);
  });

  it('with no DHCP agent at all in the deployment a DHCP-enabled subnet gives no DHCP block, so ports never wait forever (bug 10)', async () => {
    const prefix = randomKeyPrefix('ml2-noagent');
    prefixes.push(prefix);
    const bare = createStores(redis, prefix);
    await bare.records.createNetwork({ id: NETWORK_ID, name: 'n', admin_state_up: true });
    await bare.records.createSubnet({
      id: SUBNET_ID,
      network_id: NETWORK_ID,
      cidr: '10.0.0.0/24',
      enable_dhcp: true,
    });
    await bare.portProvisioning.create(plainPort('p10'));
    assert.deepEqual(await bare.blocks.blockingEntities('p10', 'port'), []);
  });

  it('a port created with a host where an agent of a supporting driver is registered gets an L2 block (A.2.2)', async () => {
    await stores.portProvisioning.create(computePort(portUuid(1)));
    assert.deepEqual(await blocksOf(portUuid(1)), ['DHCP', 'L2']);
  });

  it('no L2 block without a host, without an agent on the host, for an unsupported vnic_type, or for an ACTIVE port', async () => {
    await stores.portProvisioning.create(computePort(portUuid(2), { 'binding:host_id': '' }));
    await stores.portProvisioning.create(
      computePort(portUuid(3), { 'binding:host_id': 'compute-without-agent' }),
    );
    await stores.portProvisioning.create(computePort(portUuid(4), { 'binding:vnic_type': 'baremetal' }));
    await stores.portProvisioning.create(computePort(portUuid(5), { status: 'ACTIVE' }));
    for (const index of [2, 3, 4, 5])
      assert.deepEqual(await blocksOf(portUuid(index)), ['DHCP'], `port ${index}`);
  });

  it('an SR-IOV direct port gets its L2 block from an SR-IOV agent, and an agent’s liveness is not considered', async () => {
    await stores.agents.reportState(
      {
        agent_type: 'NIC Switch agent',
        binary: 'neutron-sriov-nic-agent',
        host: 'compute-sriov',
        topic: 'N/A',
      },
      null,
    );
    clock += 10 * 60 * 1000; // the agent is long dead now
    assert.equal((await stores.agents.get('NIC Switch agent', 'compute-sriov'))?.alive, false);
    await stores.portProvisioning.create(
      computePort(portUuid(6), { 'binding:host_id': 'compute-sriov', 'binding:vnic_type': 'direct' }),
    );
    assert.deepEqual(await blocksOf(portUuid(6)), ['DHCP', 'L2']);
    await stores.portProvisioning.create(
      computePort(portUuid(7), { 'binding:host_id': 'compute-sriov', 'binding:vnic_type': 'normal' }),
    );
    assert.deepEqual(await blocksOf(portUuid(7)), ['DHCP']);
  });

  it('an update changing the host clears the binding, forces DOWN and adds the L2 block; an update keeping the host adds none', async () => {
    const id = portUuid(8);
    await stores.portProvisioning.create(
      computePort(id, { 'binding:host_id': '', 'binding:vif_type': 'unbound' }),
    );
    await stores.blocks.provisioningComplete(id, 'port', 'DHCP');
    await stores.portProvisioning.update(id, { status: 'BUILD' });
    await stores.portProvisioning.update(id, { 'binding:host_id': COMPUTE_HOST });
    const port = await stores.ports.get(id);
    assert.deepEqual([port?.status, port?.['binding:vif_type']], ['DOWN', 'unbound']);
    assert.deepEqual(await blocksOf(id), ['L2']);
    await stores.blocks.provisioningComplete(id, 'port', 'L2');
    await stores.portProvisioning.update(id, { 'binding:vif_type': 'ovs' });
    assert.deepEqual(await blocksOf(id), []);
  });

  it('an ACTIVE port updated without an address change does not wait for the DHCP agent again (bug 5, 1714655)', async () => {
    const id = portUuid(9);
    await stores.portProvisioning.create(computePort(id, { status: 'ACTIVE' }));
    await stores.blocks.provisioningComplete(id, 'port', 'DHCP');
    await stores.portProvisioning.update(id, { device_id: 'aaaaaaaa-0000-4000-8000-00000000abcd' });
    assert.deepEqual(await blocksOf(id), []);
    assert.equal((await stores.ports.get(id))?.status, 'ACTIVE');
    await stores.portProvisioning.update(id, { 'binding:host_id': 'compute-2' });
    assert.deepEqual(await blocksOf(id), []);
    await stores.agents.reportState(
      {
        agent_type: 'Open vSwitch agent',
        binary: 'neutron-openvswitch-agent',
        host: 'compute-3',
        topic: 'N/A',
      },
      null,
    );
    await stores.portProvisioning.update(id, { 'binding:host_id': 'compute-3' });
    assert.deepEqual(await blocksOf(id), ['L2'], 'a host change waits for the L2 agent only');
  });

  it('two identical adds racing leave one block and no error (bug 7, 1613759)', async () => {
    await stores.portProvisioning.create(plainPort('p7', { fixed_ips: [] }));
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () => stores.blocks.addProvisioningComponent('p7', 'port', 'L2')),
    );
    assert.equal(outcomes.filter((outcome) => outcome === 'added').length, 1);
    assert.equal(outcomes.filter((outcome) => outcome === 'duplicate').length, 19);
    assert.deepEqual(await blocksOf('p7'), ['L2']);
  });

  it('two updates of one port racing both apply, each re-reading the other’s write (bug 7: several updates in a short time)', async () => {
    const id = portUuid(11);
    await stores.portProvisioning.create(computePort(id, { 'binding:host_id': '', fixed_ips: [] }));
    await Promise.all([
      stores.portProvisioning.update(id, { 'binding:host_id': COMPUTE_HOST }),
      stores.portProvisioning.update(id, { fixed_ips: [{ subnet_id: SUBNET_ID, ip_address: '10.0.3.3' }] }),
    ]);
    const port = await stores.ports.get(id);
    assert.equal(port?.['binding:host_id'], COMPUTE_HOST);
    assert.deepEqual(port?.fixed_ips, [{ subnet_id: SUBNET_ID, ip_address: '10.0.3.3' }]);
    assert.deepEqual(await blocksOf(id), ['DHCP', 'L2']);
  });

  it('deleting a port removes its blocks, as Neutron’s cascade, and completing it then emits nothing', async () => {
    const id = portUuid(12);
    await stores.portProvisioning.create(computePort(id));
    const change = await stores.portProvisioning.delete(id);
    assert.deepEqual([...change.blocksRemoved].sort(), ['DHCP', 'L2']);
    assert.equal(await redis.exists(stores.keys.blocks('port', id)), 0);
    assert.equal((await stores.blocks.provisioningComplete(id, 'port', 'L2')).outcome, 'missing');
    assert.equal((await stores.portProvisioning.delete(id)).outcome, 'missing');
  });

  it('resolves device names as ML2 does: tap/qvo/sg- prefixes, MAC address, [mac, pci_slot]; an ambiguous prefix matches nothing', async () => {
    const id = portUuid(13);
    await stores.portProvisioning.create(
      computePort(id, { mac_address: 'fa:16:3e:aa:bb:cc', 'binding:profile': { pci_slot: '0000:81:00.1' } }),
    );
    await stores.portProvisioning.create(computePort(portUuid(14), { mac_address: 'fa:16:3e:aa:bb:dd' }));
    assert.equal(await stores.ports.resolveDevice(id), id);
    assert.equal(await stores.ports.resolveDevice(`tap${id.slice(0, 11)}`), id);
    assert.equal(await stores.ports.resolveDevice(`qvo${id.slice(0, 11)}`), id);
    assert.equal(await stores.ports.resolveDevice('fa:16:3e:aa:bb:cc'), id);
    assert.equal(await stores.ports.resolveDevice(['fa:16:3e:aa:bb:cc', '0000:81:00.1']), id);
    assert.equal(await stores.ports.resolveDevice(['fa:16:3e:aa:bb:cc', '0000:81:00.7']), null);
    assert.equal(await stores.ports.resolveDevice('tap00'), null, 'a prefix shared by two ports');
    assert.equal(await stores.ports.resolveDevice('tapffffffff'), null);
  });
});
