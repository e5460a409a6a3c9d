import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestVhost, randomKeyPrefix, type TestVhost } from '@lifeguard/testing';
import {
  COMPUTE_HOST,
  computePort,
  deleteTestKeys,
  portUuid,
  rabbitUrl,
  runOsloAgent,
  seedNetwork,
  startTestService,
  type TestService,
} from './support.ts';

interface QueueInfo {
  durable: boolean;
  type: string;
  arguments: Record<string, unknown>;
}

describe('oslo RPC server with rabbit_quorum_queue (docs/oslo-messaging.md#quorum-queues)', () => {
  let vhost: TestVhost;
  let service: TestService;
  const prefix = randomKeyPrefix('oslo-quorum');

  before(async () => {
    vhost = await createTestVhost('oslo-quorum');
    service = await startTestService(vhost.url, prefix, {
      LIFEGUARD_PROVISIONING_RPC_QUORUM_QUEUE: 'true',
      LIFEGUARD_PROVISIONING_RPC_TRANSIENT_QUORUM_QUEUE: 'true',
      LIFEGUARD_PROVISIONING_RPC_QUORUM_DELIVERY_LIMIT: '5',
    });
    await seedNetwork(service.provisioning);
  });
  after(async () => {
    await service.close();
    await deleteTestKeys([prefix]);
    await vhost.delete();
  });

  it('declares the topic and server queues as durable quorum queues with the delivery limit, the fanout queue too', async () => {
    const plugin = await vhost.get<QueueInfo>('queues/q-plugin');
    assert.equal(plugin.type, 'quorum');
    assert.equal(plugin.durable, true);
    assert.equal(plugin.arguments['x-delivery-limit'], 5);
    const server = await vhost.get<QueueInfo>('queues/q-plugin.lifeguard-test');
    assert.equal(server.type, 'quorum');
    const fanout = service.provisioning.rpcServer?.queues.find((each) => each.kind === 'fanout');
    assert.ok(fanout);
    const fanoutQueue = await vhost.get<QueueInfo>(`queues/${fanout.queue}`);
    assert.equal(fanoutQueue.type, 'quorum');
    assert.equal(fanoutQueue.durable, true);
    assert.equal(fanoutQueue.arguments['x-expires'], 1_800_000);
  });

  it('a real oslo.messaging agent with rabbit_quorum_queue = true, running its own RPC server on the same control exchange, brings a port up', async () => {
    const port = portUuid(1, 7);
    await service.provisioning.portProvisioning.create(computePort(port));
    const results = await runOsloAgent({
      url: rabbitUrl(vhost.url),
      exchange: 'neutron',
      rabbit_options: {
        rabbit_quorum_queue: true,
        rabbit_transient_quorum_queue: true,
        rabbit_quorum_delivery_limit: 5,
      },
      // The agent's own server declares the control exchange durable, as a quorum deployment's
      // agents do: the exchange lifeguard declared must be the same.
      oslo_server: { topic: 'q-agent-quorum', server: COMPUTE_HOST },
      operations: [
        {
          kind: 'call',
          topic: 'q-plugin',
          method: 'update_device_up',
          args: { agent_id: `ovs-${COMPUTE_HOST}`, device: port, host: COMPUTE_HOST },
          version: '1.9',
        },
        { kind: 'call', topic: 'q-agent-quorum', server: COMPUTE_HOST, method: 'ping', args: { n: 1 } },
      ],
    });
    assert.deepEqual(
      results.map((each) => each.ok),
      [true, true],
      JSON.stringify(results),
    );
    assert.deepEqual(await service.provisioning.blocks.blockingEntities(port, 'port'), ['DHCP']);
    const agentQueue = await vhost.get<QueueInfo>(`queues/q-agent-quorum.${COMPUTE_HOST}`);
    assert.equal(agentQueue.type, 'quorum');
  });

  it('a server without the option on that broker is refused with the setting to change named', async () => {
    await assert.rejects(
      startTestService(vhost.url, `${prefix}-plain`, { LIFEGUARD_PROVISIONING_RPC_SERVER: 'plain' }),
      /PRECONDITION_FAILED.*LIFEGUARD_PROVISIONING_RPC_QUORUM_QUEUE/s,
    );
  });
});
