import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  DEAD_LETTER_HEADERS,
  DEAD_LETTER_QUEUE,
  decodeOsloBody,
  encodeOsloBody,
  OSLO_MESSAGE_PROPERTIES,
} from '@lifeguard/contracts';
import type { AmqpClient } from '@lifeguard/runtime';
import { createTestVhost, randomKeyPrefix, type TestVhost, waitFor } from '@lifeguard/testing';
import type { GetMessage } from 'amqplib';
import { z } from 'zod';
import { DEFAULT_OSLO_QUEUE_OPTIONS } from '../src/rpc/oslo-queue-arguments.ts';
import { OsloRpcServer } from '../src/rpc/oslo-rpc-server.ts';
import {
  COMPUTE_HOST,
  computePort,
  connectTestAmqp,
  deleteTestKeys,
  EventCollector,
  portUuid,
  rabbitUrl,
  runOsloAgent,
  seedNetwork,
  startTestService,
  type TestService,
  testLogger,
} from './support.ts';

const hex = () => randomUUID().replaceAll('-', '');

describe('oslo RPC server against a real oslo.messaging client (docs/oslo-messaging.md)', () => {
  let vhost: TestVhost;
  let service: TestService;
  let collector: EventCollector;
  let raw: AmqpClient;
  const prefix = randomKeyPrefix('oslo');

  before(async () => {
    vhost = await createTestVhost('oslo');
    service = await startTestService(vhost.url, prefix);
    collector = await EventCollector.start(vhost.url, 'test.oslo.events');
    raw = await connectTestAmqp(vhost.url, 'oslo-raw');
    await seedNetwork(service.provisioning);
  });
  after(async () => {
    await raw.close();
    await collector.close();
    await service.close();
    await deleteTestKeys([prefix]);
    await vhost.delete();
  });

  const status = async (portId: string) => (await service.provisioning.ports.get(portId))?.status;
  const agentSpec = (operations: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}) => ({
    url: rabbitUrl(vhost.url),
    exchange: 'neutron',
    operations,
    ...extra,
  });
  const ovsState = (host: string) => ({
    agent_state: {
      agent_type: 'Open vSwitch agent',
      binary: 'neutron-openvswitch-agent',
      host,
      topic: 'N/A',
      start_flag: true,
      configurations: { bridge_mappings: {} },
    },
  });

  it('calls of every method get the results Neutron gives, and the port turns ACTIVE', async () => {
    const [up, other, listed, down] = [portUuid(1, 1), portUuid(2, 1), portUuid(3, 1), portUuid(4, 1)];
    for (const id of [up, other, listed, down])
      await service.provisioning.portProvisioning.create(computePort(id));
    await service.provisioning.ports.markDown(down, null);
    await service.provisioning.portProvisioning.update(down, { status: 'ACTIVE' });
    assert.deepEqual(await service.provisioning.blocks.blockingEntities(up, 'port'), ['DHCP', 'L2']);
    const results = await runOsloAgent(
      agentSpec([
        {
          kind: 'call',
          topic: 'q-reports-plugin',
          method: 'report_state',
          version: '1.4',
          args: { agent_state: ovsState('compute-2'), time: '$now' },
        },
        {
          kind: 'call',
          topic: 'q-reports-plugin',
          method: 'report_state',
          version: '1.4',
          args: { agent_state: ovsState('compute-2'), time: '$now' },
        },
        {
          kind: 'call',
          topic: 'q-plugin',
          method: 'report_state',
          version: '1.4',
          args: { agent_state: ovsState('compute-2'), time: '$now' },
        },
        {
          kind: 'call',
          topic: 'q-plugin',
          method: 'dhcp_ready_on_ports',
          version: '1.5',
          args: { port_ids: [up, 'no-such-port'] },
        },
        {
          kind: 'call',
          topic: 'q-plugin',
          method: 'update_device_up',
          version: '1.9',
          args: { device: up, agent_id: 'ovs-agent-compute-1', host: COMPUTE_HOST },
        },
        {
          kind: 'call',
          topic: 'q-plugin',
          method: 'update_device_down',
          version: '1.9',
          args: { device: other, agent_id: 'ovs-agent-x', host: 'another-host' },
        },
        {
          kind: 'call',
          topic: 'q-plugin',
          method: 'update_device_down',
          version: '1.9',
          args: { device: 'no-such-device', agent_id: 'ovs-agent-x' },
        },
        {
          kind: 'call',
          topic: 'q-plugin',
          method: 'update_device_list',
          version: '1.9',
          args: {
            devices_up: [`tap${listed.slice(0, 11)}`],
            devices_down: [down],
            agent_id: 'ovs-agent-compute-1',
            host: COMPUTE_HOST,
            refresh_tunnels: false,
          },
        },
        {
          kind: 'call',
          topic: 'q-plugin',
          method: 'update_device_up',
          version: '1.9',
          server: 'lifeguard-test',
          args: { device: other, host: COMPUTE_HOST },
        },
      ]),
    );
    assert.deepEqual(
      results.map((each) => each.result),
      [
        'new',
        'alive',
        'alive',
        null,
        null,
        { device: other, exists: true },
        { device: 'no-such-device', exists: false },
        {
          devices_up: [`tap${listed.slice(0, 11)}`],
          failed_devices_up: [],
          devices_down: [{ device: down, exists: true }],
          failed_devices_down: [],
        },
        null,
      ],
    );
    assert.ok(results.every((each) => each.ok));
    await waitFor('the port to turn ACTIVE', async () => (await status(up)) === 'ACTIVE');
    assert.equal(await status(down), 'DOWN');
    assert.deepEqual(await service.provisioning.blocks.blockingEntities(listed, 'port'), ['DHCP']);
    assert.deepEqual(await service.provisioning.blocks.blockingEntities(other, 'port'), ['DHCP']);
    const agent = await service.provisioning.agents.get('Open vSwitch agent', 'compute-2');
    assert.equal(agent?.alive, true);
    const completion = collector.of('provisioning.complete').find((event) => event.data.objectId === up);
    assert.equal(completion?.data.entity, 'L2');
    assert.equal(completion?.data.requestId, 'req-lifeguard-test');
  });

  it('an agent starting up: has_alive_neutron_server answers True (as Neutron’s PluginReportStateAPI calls it), then report_state new; what lifeguard does not serve answers NoSuchMethod', async () => {
    const results = await runOsloAgent(
      agentSpec([
        // neutron.agent.rpc.PluginReportStateAPI: topic q-reports-plugin, version 1.2, no arguments.
        {
          kind: 'call',
          topic: 'q-reports-plugin',
          method: 'has_alive_neutron_server',
          version: '1.2',
          args: {},
        },
        { kind: 'call', topic: 'q-plugin', method: 'has_alive_neutron_server', version: '1.2', args: {} },
        {
          kind: 'call',
          topic: 'q-reports-plugin',
          method: 'report_state',
          version: '1.4',
          args: { agent_state: ovsState('compute-startup'), time: '$now' },
        },
        // The DHCP agent's first sync and the L2 agent's tunnel sync (see docs/provisioning-blocks.md).
        {
          kind: 'call',
          topic: 'q-plugin',
          method: 'get_active_networks_info',
          version: '1.1',
          args: { enable_dhcp_filter: false },
        },
        {
          kind: 'call',
          topic: 'q-plugin',
          method: 'tunnel_sync',
          version: '1.4',
          args: { tunnel_ip: '192.0.2.10', tunnel_type: 'vxlan', host: 'compute-startup' },
        },
      ]),
    );
    assert.deepEqual(results.slice(0, 3), [
      { ok: true, result: true },
      { ok: true, result: true },
      { ok: true, result: 'new' },
    ]);
    assert.deepEqual(
      results.slice(3).map((each) => [each.error, each.exc_type]),
      [
        ['RemoteError', 'NoSuchMethod'],
        ['RemoteError', 'NoSuchMethod'],
      ],
    );
  });

  it('failures reach the caller as oslo raises them: NoSuchMethod, UnsupportedVersion, TypeError, ValueError', async () => {
    const results = await runOsloAgent(
      agentSpec([
        { kind: 'call', topic: 'q-plugin', method: 'no_such_method', version: '1.9', args: { device: 'x' } },
        {
          kind: 'call',
          topic: 'q-plugin',
          method: 'update_device_up',
          version: '2.0',
          args: { device: 'x' },
        },
        {
          kind: 'call',
          topic: 'q-reports-plugin',
          method: 'update_device_up',
          version: '1.4',
          args: { device: 'x' },
        },
        {
          kind: 'call',
          topic: 'q-plugin',
          method: 'update_device_up',
          version: '1.9',
          args: { device: { bad: true } },
        },
        {
          kind: 'call',
          topic: 'q-plugin',
          method: 'report_state',
          version: '1.4',
          args: { agent_state: ovsState('compute-3'), time: 'yesterday' },
        },
      ]),
    );
    assert.deepEqual(
      results.map((each) => [each.error, each.exc_type]),
      [
        ['RemoteError', 'NoSuchMethod'],
        ['RemoteError', 'UnsupportedVersion'],
        ['RemoteError', 'NoSuchMethod'],
        ['TypeError', null],
        ['ValueError', null],
      ],
    );
    assert.match(results[0]!.message!, /Endpoint does not support RPC method no_such_method/);
    assert.match(
      results[1]!.message!,
      /Endpoint does not support RPC version 2\.0\. Attempted method: update_device_up/,
    );
    assert.match(results[3]!.message!, /device/);
    assert.match(results[4]!.message!, /does not match format/);
  });

  it('casts of every method take effect, and a cast of an unknown method is dead-lettered with the reason', async () => {
    const port = portUuid(10, 1);
    await service.provisioning.portProvisioning.create(computePort(port));
    const results = await runOsloAgent(
      agentSpec([
        {
          kind: 'cast',
          topic: 'q-reports-plugin',
          method: 'report_state',
          version: '1.4',
          args: { agent_state: ovsState('compute-4'), time: '$now' },
        },
        {
          kind: 'cast',
          topic: 'q-plugin',
          method: 'dhcp_ready_on_ports',
          version: '1.5',
          args: { port_ids: [port] },
        },
        {
          kind: 'cast',
          topic: 'q-plugin',
          method: 'update_device_up',
          version: '1.9',
          args: { device: port, host: COMPUTE_HOST },
        },
        { kind: 'cast', topic: 'q-plugin', method: 'no_such_cast', version: '1.9', args: { device: port } },
      ]),
    );
    assert.ok(results.every((each) => each.ok));
    await waitFor('the port to turn ACTIVE', async () => (await status(port)) === 'ACTIVE');
    await waitFor(
      'the agent registered',
      async () => (await service.provisioning.agents.get('Open vSwitch agent', 'compute-4')) ?? undefined,
    );
    const dead = await waitFor('the dead letter', () => deadLetterFrom('q-plugin', /NoSuchMethod/));
    assert.match(
      String(dead.properties.headers?.[DEAD_LETTER_HEADERS.reason]),
      /Endpoint does not support RPC method no_such_cast/,
    );
    await runOsloAgent(
      agentSpec([
        {
          kind: 'cast',
          topic: 'q-plugin',
          method: 'update_device_list',
          version: '1.9',
          args: { devices_up: [], devices_down: [port], host: COMPUTE_HOST },
        },
      ]),
    );
    await waitFor('the port to go DOWN', async () => (await status(port)) === 'DOWN');
  });

  async function deadLetterFrom(queue: string, reason: RegExp): Promise<GetMessage | undefined> {
    return raw.withChannel(async (channel) => {
      for (;;) {
        const message = await channel.get(DEAD_LETTER_QUEUE, { noAck: true });
        if (message === false) return undefined;
        const headers = message.properties.headers ?? {};
        if (
          headers[DEAD_LETTER_HEADERS.queue] === queue &&
          reason.test(String(headers[DEAD_LETTER_HEADERS.reason]))
        ) {
          return message;
        }
      }
    });
  }

  it('an unparseable body is dead-lettered with the reason and the queue keeps flowing', async () => {
    const port = portUuid(20, 1);
    await service.provisioning.portProvisioning.create(computePort(port, { 'binding:host_id': '' }));
    await raw.publish('neutron', 'q-plugin', Buffer.from('{not json'), {
      ...OSLO_MESSAGE_PROPERTIES,
      mandatory: true,
    });
    await raw.publish(
      'neutron',
      'q-plugin',
      Buffer.from(
        encodeOsloBody({
          method: 'dhcp_ready_on_ports',
          args: { port_ids: [port] },
          version: '1.5',
          _unique_id: hex(),
        }),
      ),
      { ...OSLO_MESSAGE_PROPERTIES, mandatory: true },
    );
    const dead = await waitFor('the dead letter', () => deadLetterFrom('q-plugin', /not JSON/));
    assert.equal(dead.content.toString(), '{not json');
    await waitFor(
      'the next request to be handled',
      async () => (await service.provisioning.blocks.isObjectBlocked(port, 'port')) === false,
    );
  });

  it('a redelivered request (same _unique_id) takes effect once, and a repeated call gets the remembered reply', async () => {
    const port = portUuid(30, 1);
    await service.provisioning.portProvisioning.create(computePort(port, { 'binding:host_id': '' }));
    const replies: Array<Record<string, unknown>> = [];
    const replyQueue = `reply_${hex()}`;
    await raw.declare(async (channel) => {
      await channel.assertQueue(replyQueue, { durable: false, arguments: { 'x-expires': 1_800_000 } });
    });
    await raw.consume({
      queue: replyQueue,
      prefetch: 10,
      contract: 'reply',
      decode: (content) => decodeOsloBody(content),
      handler: async (reply) => {
        replies.push(reply as Record<string, unknown>);
      },
    });
    const before = collector
      .of('provisioning.complete')
      .filter((event) => event.data.objectId === port).length;
    const request = encodeOsloBody({
      method: 'dhcp_ready_on_ports',
      args: { port_ids: [port] },
      version: '1.5',
      _msg_id: hex(),
      _reply_q: replyQueue,
      _timeout: null,
      _unique_id: hex(),
      _context_request_id: 'req-duplicate',
    });
    for (let copy = 0; copy < 3; copy++) {
      await raw.publish('neutron', 'q-plugin', Buffer.from(request), {
        ...OSLO_MESSAGE_PROPERTIES,
        expiration: '5000',
      });
    }
    await waitFor('three replies', () => replies.length === 3);
    assert.ok(
      replies.every((reply) => reply.ending === true && reply.failure === null && reply.result === null),
    );
    await waitFor('the completion event', () =>
      collector.of('provisioning.complete').some((event) => event.data.objectId === port),
    );
    await waitFor('the port ACTIVE', async () => (await status(port)) === 'ACTIVE' || undefined).catch(
      () => undefined,
    );
    const after = collector
      .of('provisioning.complete')
      .filter((event) => event.data.objectId === port).length;
    assert.equal(after - before, 1);
    const suppressed = /lifeguard_provisioning_duplicates_suppressed_total\{source="rpc"[^}]*\} (\d+)/.exec(
      await service.context.registry.metrics(),
    );
    assert.equal(suppressed?.[1], '2');
  });

  it('sends call-monitor heartbeats when the caller asked (_timeout ≥ 2) and never when it did not', async () => {
    const slow = new OsloRpcServer({
      amqp: service.context.amqp,
      redis: service.context.redis,
      keys: service.provisioning.keys,
      exchange: 'neutron',
      serverName: 'slow-host',
      topics: [
        {
          topic: 'q-slow',
          endpoints: [
            {
              name: 'SlowEndpoint',
              version: '1.0',
              namespace: null,
              methods: new Map([
                [
                  'slow',
                  {
                    args: z.object({ seconds: z.number() }),
                    handler: async (args: { seconds: number }) => {
                      await new Promise((resolve) => setTimeout(resolve, args.seconds * 1000));
                      return 'done';
                    },
                  },
                ],
              ]),
            },
          ],
        },
      ],
      prefetch: 10,
      queueOptions: { ...DEFAULT_OSLO_QUEUE_OPTIONS, transientQueueTtlSeconds: 1800 },
      handledTtlSeconds: 60,
      missingReplyQueueRetrySeconds: 5,
      logger: testLogger,
    });
    await slow.start();
    try {
      const results = await runOsloAgent(
        agentSpec([
          {
            kind: 'call',
            topic: 'q-slow',
            method: 'slow',
            version: '1.0',
            timeout: 20,
            call_monitor_timeout: 2,
            args: { seconds: 3.5 },
          },
          {
            kind: 'call',
            topic: 'q-slow',
            method: 'slow',
            version: '1.0',
            timeout: 10,
            args: { seconds: 1.5 },
          },
        ]),
      );
      assert.deepEqual(results, [
        { ok: true, result: 'done' },
        { ok: true, result: 'done' },
      ]);
    } finally {
      await slow.stop();
    }
  });

  it('declares oslo’s topology with oslo’s flags, and a real oslo RPC server shares the control exchange', async () => {
    const queue = await vhost.get<{
      durable: boolean;
      auto_delete: boolean;
      arguments: Record<string, unknown>;
    }>('queues/q-plugin');
    assert.deepEqual([queue.durable, queue.auto_delete, queue.arguments], [false, false, {}]);
    const serverQueue = await vhost.get<{ durable: boolean }>('queues/q-reports-plugin.lifeguard-test');
    assert.equal(serverQueue.durable, false);
    const exchange = await vhost.get<{ type: string; durable: boolean; auto_delete: boolean }>(
      'exchanges/neutron',
    );
    assert.deepEqual([exchange.type, exchange.durable, exchange.auto_delete], ['topic', false, false]);
    const fanout = await vhost.get<{ type: string; auto_delete: boolean }>('exchanges/q-plugin_fanout');
    assert.deepEqual([fanout.type, fanout.auto_delete], ['fanout', true]);
    const fanoutQueue = service.provisioning.rpcServer!.queues.find((each) => each.kind === 'fanout')!.queue;
    assert.match(fanoutQueue, /^q-plugin_fanout_[0-9a-f]{32}$/);
    const declared = await vhost.get<{ arguments: Record<string, unknown> }>(`queues/${fanoutQueue}`);
    assert.deepEqual(declared.arguments, { 'x-expires': 1_800_000 });
    const results = await runOsloAgent(
      agentSpec(
        [
          { kind: 'call', topic: 'q-oslo-peer', method: 'ping', version: '1.0', args: { hello: 'world' } },
          {
            kind: 'call',
            topic: 'q-reports-plugin',
            method: 'report_state',
            version: '1.4',
            args: { agent_state: ovsState('compute-5'), time: '$now' },
          },
        ],
        { oslo_server: { topic: 'q-oslo-peer', server: 'peer-host' } },
      ),
    );
    assert.deepEqual(results, [
      { ok: true, result: { pong: { hello: 'world' } } },
      { ok: true, result: 'new' },
    ]);
  });
});
