import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  DEAD_LETTER_HEADERS,
  DEAD_LETTER_QUEUE,
  NATIVE_AGENTS_EXCHANGE,
  PROVISIONING_COMMANDS_EXCHANGE,
  QUEUES,
} from '@lifeguard/contracts';
import type { AmqpClient } from '@lifeguard/runtime';
import { createTestVhost, randomKeyPrefix, type TestVhost, waitFor } from '@lifeguard/testing';
import type { GetMessage } from 'amqplib';
import {
  computePort,
  connectTestAmqp,
  deleteTestKeys,
  portUuid,
  startTestService,
  type TestService,
} from './support.ts';

describe('native JSON contract: record commands and agent messages over AMQP', () => {
  let vhost: TestVhost;
  let service: TestService;
  let client: AmqpClient;
  const prefix = randomKeyPrefix('native');
  const deadLetters: GetMessage[] = [];

  before(async () => {
    vhost = await createTestVhost('native');
    service = await startTestService(vhost.url, prefix);
    client = await connectTestAmqp(vhost.url, 'native-test');
  });
  after(async () => {
    await client.close();
    await service.close();
    await deleteTestKeys([prefix]);
    await vhost.delete();
  });

  const command = (body: Record<string, unknown>) =>
    client.publish(PROVISIONING_COMMANDS_EXCHANGE, String(body.command), Buffer.from(JSON.stringify(body)), {
      contentType: 'application/json',
      persistent: true,
    });
  const agentMessage = (body: Record<string, unknown> | string) =>
    client.publish(
      NATIVE_AGENTS_EXCHANGE,
      typeof body === 'string' ? 'garbage' : String(body.type),
      Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
      { contentType: 'application/json', persistent: true },
    );
  /** The dead letter from `queue` whose reason matches, reading the dead-letter queue as needed. */
  const deadLetter = (queue: string, reason: RegExp) =>
    waitFor(`a dead letter from ${queue} matching ${reason}`, async () => {
      for (;;) {
        const found = deadLetters.find(
          (message) =>
            message.properties.headers?.[DEAD_LETTER_HEADERS.queue] === queue &&
            reason.test(String(message.properties.headers?.[DEAD_LETTER_HEADERS.reason])),
        );
        if (found) return found;
        const next = await client.withChannel((channel) => channel.get(DEAD_LETTER_QUEUE, { noAck: true }));
        if (next === false) return undefined;
        deadLetters.push(next);
      }
    });
  const status = async (portId: string) => (await service.provisioning.ports.get(portId))?.status;
  const blocks = (portId: string) => service.provisioning.blocks.blockingEntities(portId, 'port');

  it('commands build the records in the order sent, and agent messages complete the blocks until the port is ACTIVE', async () => {
    await agentMessage({
      type: 'report_state',
      agent_type: 'DHCP agent',
      binary: 'my-dhcp',
      host: 'net-a',
      topic: 'dhcp_agent',
    });
    await agentMessage({
      type: 'report_state',
      agent_type: 'Open vSwitch agent',
      binary: 'my-l2',
      host: 'compute-a',
      start_flag: true,
    });
    await waitFor(
      'both agents registered',
      async () => (await service.provisioning.agents.list()).length === 2,
    );
    const id = portUuid(1, 3);
    const port = computePort(id, {
      network_id: 'net-x',
      fixed_ips: [{ subnet_id: 'sub-x' }],
      'binding:host_id': 'compute-a',
    });
    await command({ command: 'network.create', network: { id: 'net-x', name: 'x' } });
    await command({
      command: 'subnet.create',
      subnet: { id: 'sub-x', network_id: 'net-x', cidr: '10.9.0.0/24' },
    });
    await command({ command: 'network.dhcp_agent.add', network_id: 'net-x', host: 'net-a' });
    await command({ command: 'port.create', port });
    await waitFor('the port with both blocks', async () => (await blocks(id)).length === 2);
    assert.deepEqual(await blocks(id), ['DHCP', 'L2']);
    await agentMessage({ type: 'dhcp.ready', port_ids: [id] });
    await agentMessage({ type: 'device.up', device: `tap${id.slice(0, 11)}`, host: 'compute-a' });
    await waitFor('the port ACTIVE', async () => (await status(id)) === 'ACTIVE');
    await agentMessage({ type: 'device.down', device: port.mac_address, host: 'compute-a' });
    await waitFor('the port DOWN', async () => (await status(id)) === 'DOWN');
    await command({ command: 'port.delete', port_id: id });
    await waitFor('the port deleted', async () => (await service.provisioning.ports.get(id)) === null);
  });

  it('a command sent twice (a redelivery) changes nothing the second time and is not dead-lettered', async () => {
    const id = portUuid(2, 3);
    const create = {
      command: 'port.create',
      port: computePort(id, { network_id: 'net-x', fixed_ips: [], 'binding:host_id': '' }),
    };
    await command(create);
    await command(create);
    await command({ command: 'port.update', port_id: id, changes: { admin_state_up: false } });
    await command({ command: 'port.delete', port_id: id });
    await command({ command: 'port.delete', port_id: id });
    await command({ command: 'network.create', network: { id: 'net-marker', name: 'marker' } });
    await waitFor(
      'the marker network',
      async () => (await service.provisioning.records.getNetwork('net-marker')) ?? undefined,
    );
    assert.equal(await service.provisioning.ports.get(id), null);
    const metrics = await service.context.registry.metrics();
    assert.match(
      metrics,
      /lifeguard_provisioning_commands_total\{command="port.create",outcome="unchanged"[^}]*\} 1/,
    );
    assert.doesNotMatch(
      metrics,
      /lifeguard_provisioning_commands_total\{command="port\.(create|delete)",outcome="rejected"/,
    );
  });

  it('bad commands are dead-lettered with the reason and the queue keeps flowing', async () => {
    await command({ command: 'port.create', port: { id: 'no-network' } });
    await command({ command: 'subnet.create', subnet: { id: 'orphan', network_id: 'no-such-network' } });
    await command({ command: 'port.update', port_id: 'no-such-port', changes: { admin_state_up: false } });
    await command({ command: 'network.dhcp_agent.add', network_id: 'net-x', host: 'no-dhcp-agent-here' });
    await command({
      command: 'port.create',
      port: computePort(portUuid(3, 3), { network_id: 'net-x', mac_address: 'fa:16:3e:00:00:03' }),
    });
    await command({
      command: 'port.create',
      port: computePort(portUuid(3, 3), { network_id: 'net-x', mac_address: 'fa:16:3e:99:99:99' }),
    });
    await command({ command: 'volume.attach' });
    const queue = QUEUES.provisioningCommands;
    await deadLetter(queue, /port\.network_id/);
    await deadLetter(queue, /subnet orphan: network no-such-network does not exist/);
    await deadLetter(queue, /port no-such-port does not exist/);
    await deadLetter(queue, /no DHCP agent is registered on host no-dhcp-agent-here/);
    await deadLetter(queue, /already exists with other attributes/);
    await deadLetter(queue, /command/);
    await command({ command: 'network.create', network: { id: 'net-after-bad', name: '' } });
    await waitFor(
      'the next command applied',
      async () => (await service.provisioning.records.getNetwork('net-after-bad')) ?? undefined,
    );
  });

  it('bad agent messages are dead-lettered with the reason; the known ports of a dhcp.ready are still completed', async () => {
    const known = portUuid(4, 3);
    await service.provisioning.portProvisioning.create(
      computePort(known, { network_id: 'net-x', fixed_ips: [], 'binding:host_id': '' }),
    );
    await service.provisioning.blocks.addProvisioningComponent(known, 'port', 'DHCP');
    await agentMessage('{not json');
    await agentMessage({ type: 'device.up', device: 'no-such-device', host: 'compute-a' });
    await agentMessage({ type: 'dhcp.ready', port_ids: [known, 'no-such-port'] });
    await agentMessage({ type: 'device.up' });
    const queue = QUEUES.nativeAgents;
    await deadLetter(queue, /not JSON/);
    await deadLetter(queue, /device\.up: no port matches device "no-such-device"/);
    await deadLetter(queue, /dhcp\.ready: ports no-such-port do not exist/);
    await deadLetter(queue, /device/);
    assert.deepEqual(await blocks(known), []);
  });

  it('the command queue has one active consumer at a time, so replicas apply commands in order', async () => {
    const queue = await vhost.get<{ arguments: Record<string, unknown> }>(
      `queues/${QUEUES.provisioningCommands}`,
    );
    assert.equal(queue.arguments['x-single-active-consumer'], true);
  });
});
