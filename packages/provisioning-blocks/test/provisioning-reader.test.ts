// The read-only provisioning reader against real Redis: for each record the write-side stores keep
// (PortStore, BlockStore, AgentRegistry, the outbox), the reader returns what the store wrote, on a
// connection of its own that never had a script defined, and sends only plain read commands.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '@lifeguard/runtime';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis } from '@lifeguard/testing';
import type { Command } from 'ioredis';
import { AgentRegistry } from '../src/store/agent-registry.ts';
import { BlockStore } from '../src/store/block-store.ts';
import { OutboxRelay } from '../src/store/outbox-relay.ts';
import { PortStore } from '../src/store/port-store.ts';
import { ProvisioningKeys } from '../src/store/provisioning-keys.ts';
import { ProvisioningReader } from '../src/store/provisioning-reader.ts';
import { RecordStore } from '../src/store/record-store.ts';
import { SOURCE, storePort } from './support.ts';

const BLOCKED = '3f2a9c1e-7b44-4d0e-9a51-0c6f2b8d1e77';
const SRIOV = '3f2a9c1e-0000-4d0e-9a51-0c6f2b8d1e78';
const UNBLOCKED = '8c1d2e3f-0000-4aaa-bbbb-123456789abc';
const SHARED_MAC = 'fa:16:3e:aa:bb:cc';

/** The commands a read-only reader may send: plain reads of keys, nothing that writes or runs a script. */
const READ_COMMANDS = new Set(['hgetall', 'smembers', 'zrange', 'zrangebylex', 'zcard', 'xlen', 'xrange']);

describe('ProvisioningReader: reads what the write-side stores wrote, with plain reads only', () => {
  const prefix = randomKeyPrefix('provisioning-reader');
  const keys = new ProvisioningKeys(prefix);
  const writer = testRedis();
  const readerConnection = testRedis();
  const sent: string[] = [];
  const started = Date.parse('2026-11-30T08:00:00Z');
  let clock = started + 1000;
  const now = () => clock;
  const ports = new PortStore(writer, keys, SOURCE);
  const blocks = new BlockStore(writer, keys, SOURCE);
  const agents = new AgentRegistry({
    redis: writer,
    keys,
    records: new RecordStore(writer, keys),
    logger: createLogger({ service: 'test', level: 'silent' }),
    agentDownTimeSeconds: 75,
    enableNewAgents: true,
    startedAtMilliseconds: started,
    now,
  });
  const relay = new OutboxRelay({
    redis: writer,
    blockingRedis: writer,
    keys,
    consumerName: 'test',
    publish: () => Promise.reject(new Error('not relayed in this test')),
    logger: createLogger({ service: 'test', level: 'silent' }),
  });
  const reader = new ProvisioningReader(readerConnection, keys, { agentDownTimeSeconds: 75, now });

  before(async () => {
    // Connected (and its ready check done) before the reader's commands are recorded.
    await readerConnection.ping();
    const send = readerConnection.sendCommand.bind(readerConnection);
    readerConnection.sendCommand = (command: Command, ...rest: unknown[]) => {
      sent.push(command.name.toLowerCase());
      return (send as (...args: unknown[]) => unknown)(command, ...rest);
    };
    await storePort(ports, { id: BLOCKED, mac_address: 'fa:16:3e:00:00:01', 'binding:host_id': 'compute-1' });
    await blocks.addProvisioningComponent(BLOCKED, 'port', 'L2');
    await blocks.addProvisioningComponent(BLOCKED, 'port', 'DHCP');
    await storePort(ports, {
      id: SRIOV,
      mac_address: SHARED_MAC,
      'binding:profile': { pci_slot: '0000:81:00.1' },
    });
    await storePort(ports, { id: UNBLOCKED, mac_address: 'fa:16:3e:00:00:02' });
    await blocks.addProvisioningComponent(UNBLOCKED, 'port', 'DHCP');
    // The last block of UNBLOCKED goes: its provisioning.complete waits in the outbox.
    assert.equal((await blocks.provisioningComplete(UNBLOCKED, 'port', 'DHCP')).outcome, 'emitted');
    const report = { binary: 'neutron-openvswitch-agent', topic: 'N/A', configurations: {} };
    await agents.reportState({ ...report, agent_type: 'Open vSwitch agent', host: 'compute-2' }, clock);
    await agents.reportState({ ...report, agent_type: 'DHCP agent', host: 'net-1' }, clock);
    clock += 60_000;
    await agents.reportState({ ...report, agent_type: 'Open vSwitch agent', host: 'compute-1' }, clock);
    // compute-2 and net-1 last reported 80 s ago: over agent_down_time (75 s), dead.
    clock += 20_000;
  });

  after(async () => {
    await deleteKeysWithPrefix(writer, prefix);
    writer.disconnect();
    readerConnection.disconnect();
  });

  const cases: ReadonlyArray<{
    reads: string;
    read: () => Promise<unknown>;
    written: () => Promise<unknown>;
    expected?: (value: unknown) => void;
  }> = [
    {
      reads: 'a port record as PortStore.get returns it',
      read: () => reader.port(BLOCKED),
      written: () => ports.get(BLOCKED),
      expected: (port) =>
        assert.deepEqual((port as { mac_address: string }).mac_address, 'fa:16:3e:00:00:01'),
    },
    {
      reads: 'a port that does not exist as null',
      read: () => reader.port('no-such-port'),
      written: () => ports.get('no-such-port'),
      expected: (port) => assert.equal(port, null),
    },
    {
      reads: 'a device name tap<start of the id>',
      read: () => reader.resolveDevice(`tap${UNBLOCKED.slice(0, 11)}`),
      written: () => ports.resolveDevice(`tap${UNBLOCKED.slice(0, 11)}`),
      expected: (id) => assert.equal(id, UNBLOCKED),
    },
    {
      reads: 'a start of an id shared by two ports as no port',
      read: () => reader.resolveDevice('tap3f2a9c1e'),
      written: () => ports.resolveDevice('tap3f2a9c1e'),
      expected: (id) => assert.equal(id, null),
    },
    {
      reads: 'a MAC address, and a MAC address with the pci_slot of its binding profile',
      read: async () => [
        await reader.resolveDevice(SHARED_MAC),
        await reader.resolveDevice([SHARED_MAC, '0000:81:00.1']),
        await reader.resolveDevice([SHARED_MAC, '0000:81:00.7']),
      ],
      written: async () => [
        await ports.resolveDevice(SHARED_MAC),
        await ports.resolveDevice([SHARED_MAC, '0000:81:00.1']),
        await ports.resolveDevice([SHARED_MAC, '0000:81:00.7']),
      ],
      expected: (ids) => assert.deepEqual(ids, [SRIOV, SRIOV, null]),
    },
    {
      reads: "a port's provisioning blocks, sorted",
      read: () => reader.blockingEntities(BLOCKED),
      written: () => blocks.blockingEntities(BLOCKED, 'port'),
      expected: (entities) => assert.deepEqual(entities, ['DHCP', 'L2']),
    },
    {
      reads: 'no block once the last one went',
      read: () => reader.blockingEntities(UNBLOCKED, 'port'),
      written: () => blocks.blockingEntities(UNBLOCKED, 'port'),
      expected: (entities) => assert.deepEqual(entities, []),
    },
    {
      reads: 'the port ids in id order, and how many there are',
      read: async () => [await reader.portIds(2), await reader.portCount()],
      written: async () => [[SRIOV, BLOCKED], 3],
    },
    {
      reads: 'every agent with its liveness, as AgentRegistry.list returns them',
      read: () => reader.agents(),
      written: () => agents.list(),
      expected: (listed) =>
        assert.deepEqual(
          (listed as Array<{ host: string; agent_type: string; alive: boolean }>).map((agent) => [
            agent.host,
            agent.agent_type,
            agent.alive,
          ]),
          [
            ['compute-1', 'Open vSwitch agent', true],
            ['compute-2', 'Open vSwitch agent', false],
            ['net-1', 'DHCP agent', false],
          ],
        ),
    },
    {
      reads: 'one agent, and null for an agent never registered',
      read: async () => [await reader.agent('DHCP agent', 'net-1'), await reader.agent('L3 agent', 'net-1')],
      written: async () => [await agents.get('DHCP agent', 'net-1'), await agents.get('L3 agent', 'net-1')],
    },
    {
      reads: 'the outbox depth as the relay counts it',
      read: async () => (await reader.outboxDepth()).depth,
      written: async () => (await relay.depthAndLag()).depth,
      expected: (depth) => assert.equal(depth, 1),
    },
  ];

  for (const { reads, read, written, expected } of cases) {
    it(`reads ${reads}`, async () => {
      const value = await read();
      assert.deepEqual(value, await written());
      expected?.(value);
    });
  }

  it('sent only plain read commands, and defined no script on its connection', () => {
    assert.ok(sent.length > 0, 'the reader read through its own connection');
    assert.deepEqual(
      [...new Set(sent)].filter((command) => !READ_COMMANDS.has(command)),
      [],
      'commands other than plain reads',
    );
    assert.deepEqual(Object.keys(readerConnection.scriptsSet), []);
  });
});
