import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createLogger } from '@lifeguard/runtime';
import { CapturedLines, deleteKeysWithPrefix, randomKeyPrefix, testRedis } from '@lifeguard/testing';
import type { Redis } from 'ioredis';
import { AgentRegistry } from '../src/store/agent-registry.ts';
import { ProvisioningKeys } from '../src/store/provisioning-keys.ts';
import { RecordStore } from '../src/store/record-store.ts';
import { NETWORK_ID } from './support.ts';

const ovs = {
  agent_type: 'Open vSwitch agent',
  binary: 'neutron-openvswitch-agent',
  host: 'compute-1',
  topic: 'N/A',
  configurations: { bridge_mappings: { physnet1: 'br-ex' } },
};

describe('agent registry: report_state heartbeats and liveness (docs/neutron-provisioning-rules.md#report_state)', () => {
  let redis: Redis;
  const prefixes: string[] = [];
  let clock: number;
  let registry: AgentRegistry;
  let records: RecordStore;
  let lines: CapturedLines;
  const started = Date.parse('2026-11-30T08:00:00Z');

  before(() => {
    redis = testRedis();
  });
  beforeEach(() => {
    const prefix = randomKeyPrefix('agents');
    prefixes.push(prefix);
    const keys = new ProvisioningKeys(prefix);
    records = new RecordStore(redis, keys);
    clock = started + 1000;
    lines = new CapturedLines();
    registry = new AgentRegistry({
      redis,
      keys,
      records,
      logger: createLogger({ service: 'test', level: 'debug', destination: lines }),
      agentDownTimeSeconds: 75,
      enableNewAgents: true,
      startedAtMilliseconds: started,
      now: () => clock,
    });
  });
  after(async () => {
    for (const prefix of prefixes) await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  it('answers "new" for a first report, "alive" within agent_down_time, "revived" after it', async () => {
    assert.equal(await registry.reportState({ ...ovs, start_flag: true }, clock), 'new');
    clock += 30_000;
    assert.equal(await registry.reportState(ovs, clock), 'alive');
    clock += 75_000;
    assert.equal(
      await registry.reportState(ovs, clock),
      'alive',
      'exactly agent_down_time old is still alive',
    );
    clock += 75_001;
    assert.equal((await registry.get(ovs.agent_type, ovs.host))?.alive, false);
    assert.equal(await registry.reportState(ovs, clock), 'revived');
    assert.equal((await registry.get(ovs.agent_type, ovs.host))?.alive, true);
  });

  it('keeps the server’s time as heartbeat_timestamp, started_at on start_flag, and the reported configuration', async () => {
    await registry.reportState({ ...ovs, start_flag: true, availability_zone: 'az-1' }, clock - 500);
    const first = await registry.get(ovs.agent_type, ovs.host);
    assert.equal(first?.heartbeat_timestamp, new Date(clock).toISOString());
    assert.equal(first?.availability_zone, 'az-1');
    assert.equal(first?.admin_state_up, true);
    clock += 10_000;
    await registry.reportState({ ...ovs, configurations: { devices: 3 } }, clock);
    const second = await registry.get(ovs.agent_type, ovs.host);
    assert.equal(second?.started_at, first?.started_at);
    assert.equal(second?.id, first?.id);
    assert.deepEqual(second?.configurations, { devices: 3 });
    assert.equal(second?.availability_zone, 'az-1', 'an absent availability_zone keeps the stored one');
    clock += 10_000;
    await registry.reportState({ ...ovs, start_flag: true }, clock);
    assert.equal((await registry.get(ovs.agent_type, ovs.host))?.started_at, new Date(clock).toISOString());
  });

  it('skips a report whose agent time is older than the service start: answer null, nothing stored', async () => {
    assert.equal(await registry.reportState(ovs, started - 1), null);
    assert.equal(await registry.get(ovs.agent_type, ovs.host), null);
  });

  it('logs a clock-skew error on a start_flag report more than agent_down_time off, and still records it', async () => {
    assert.equal(await registry.reportState({ ...ovs, start_flag: true }, clock + 120_000), 'new');
    assert.match(lines.text, /agent clock differs from the server clock by more than agent_down_time/);
  });

  it('agents are keyed by (agent_type, host); deleting a DHCP agent removes its network bindings', async () => {
    const dhcp = {
      agent_type: 'DHCP agent',
      binary: 'neutron-dhcp-agent',
      host: 'compute-1',
      topic: 'dhcp_agent',
    };
    await registry.reportState(ovs, null);
    await registry.reportState(dhcp, null);
    assert.deepEqual(
      (await registry.list()).map((agent) => agent.agent_type),
      ['DHCP agent', 'Open vSwitch agent'],
    );
    await records.createNetwork({ id: NETWORK_ID, name: '', admin_state_up: true });
    assert.equal(await records.addDhcpAgentToNetwork(NETWORK_ID, 'compute-1'), 'ok');
    assert.equal(await records.addDhcpAgentToNetwork(NETWORK_ID, 'compute-2'), 'no-agent');
    assert.deepEqual(await records.dhcpAgentHosts(NETWORK_ID), ['compute-1']);
    assert.equal(await registry.delete('DHCP agent', 'compute-1'), true);
    assert.deepEqual(await records.dhcpAgentHosts(NETWORK_ID), []);
    assert.deepEqual(
      (await registry.list()).map((agent) => agent.agent_type),
      ['Open vSwitch agent'],
    );
  });
});
