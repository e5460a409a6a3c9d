// Every consumer of lifeguard's AMQP queues, fed generated malformed messages interleaved with good
// ones, while the whole stack (as `npm start` runs it on cloud-sim) handles a real incident: no
// consumer crashes or stalls, every bad message is dead-lettered with its reason or answered with an
// oslo failure, and every good message is processed. The generator is seeded
// (LIFEGUARD_FUZZ_SEED, default below) so a failure reproduces; the seed is printed.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  DEAD_LETTER_HEADERS,
  DEAD_LETTER_QUEUE,
  decodeOsloBody,
  encodeOsloBody,
  type LifeguardEvent,
  QUEUES,
} from '@lifeguard/contracts';
import { AmqpClient, createLogger } from '@lifeguard/runtime';
import { FAST_CLOUD_TIMINGS, FAST_INSTANCE_HA, waitFor } from '@lifeguard/testing';
import fc from 'fast-check';
import { SimulatedDeployment } from '../e2e/support/simulated-deployment.ts';
import {
  type FuzzMessage,
  genericBadMessage,
  hugeMessage,
  malformedEvent,
  malformedNative,
  malformedOslo,
} from './malformed-messages.ts';

const SEED = Number(process.env.LIFEGUARD_FUZZ_SEED ?? 1_202_612);
/** Bad messages per consumer: 7 consumers, over 10,000 in all. */
const BAD_PER_CONSUMER = 1450;
const HUGE_PER_CONSUMER = 3;
/** A good message after every this many bad ones. */
const GOOD_EVERY = 25;
const REPLY_QUEUE = `reply_fuzz_${randomUUID().replaceAll('-', '')}`;

interface Target {
  readonly name: string;
  readonly queue: string;
  readonly bad: fc.Arbitrary<FuzzMessage>;
  /** A good message, numbered; null where the good traffic is the real incident's. */
  readonly good: ((index: number) => Buffer) | null;
}

const event = (type: string, data: Record<string, unknown>) =>
  Buffer.from(
    JSON.stringify({
      id: randomUUID(),
      schemaVersion: 1,
      occurredAt: new Date().toISOString(),
      source: { service: 'fuzz', instance: 'fuzz:1' },
      type,
      data,
    }),
  );

const targets: Target[] = [
  {
    name: 'oslo RPC server (q-plugin)',
    queue: 'q-plugin',
    bad: fc.oneof(
      { weight: 3, arbitrary: genericBadMessage() },
      { weight: 7, arbitrary: malformedOslo(REPLY_QUEUE) },
    ),
    good: (index) =>
      Buffer.from(
        encodeOsloBody({
          method: 'has_alive_neutron_server',
          args: {},
          version: '1.2',
          _msg_id: `900d${String(index).padStart(28, '0')}`,
          _reply_q: REPLY_QUEUE,
          _unique_id: randomUUID().replaceAll('-', ''),
          _timeout: null,
        }),
      ),
  },
  {
    name: 'native record commands',
    queue: QUEUES.provisioningCommands,
    bad: fc.oneof(
      genericBadMessage(),
      malformedNative('command', ['network.create', 'port.create', 'port.update', 'subnet.create']),
    ),
    good: (index) =>
      Buffer.from(
        JSON.stringify({
          command: 'network.create',
          network: { id: `fuzz-net-${index}`, name: `fuzz-${index}`, admin_state_up: true },
        }),
      ),
  },
  {
    name: 'native agent messages',
    queue: QUEUES.nativeAgents,
    bad: fc.oneof(genericBadMessage(), malformedNative('type', ['report_state', 'dhcp.ready', 'device.up'])),
    good: (index) =>
      Buffer.from(
        JSON.stringify({
          type: 'report_state',
          agent_type: 'Open vSwitch agent',
          binary: 'fuzz-agent',
          host: `fuzz-host-${index}`,
          topic: 'N/A',
          start_flag: true,
          configurations: {},
        }),
      ),
  },
  {
    name: 'port-status subscriber',
    queue: QUEUES.provisioningComplete,
    bad: fc.oneof(genericBadMessage(), malformedEvent('provisioning.complete')),
    good: (index) =>
      event('provisioning.complete', { objectType: 'port', objectId: `fuzz-port-${index}`, entity: 'L2' }),
  },
  {
    name: 'Nova notifier',
    queue: QUEUES.novaPortNotifications,
    bad: fc.oneof(genericBadMessage(), malformedEvent('port.status.changed')),
    good: (index) =>
      event('port.status.changed', {
        portId: `fuzz-port-${index}`,
        previousStatus: 'DOWN',
        status: 'ACTIVE',
        deviceId: `fuzz-router-${index}`,
        deviceOwner: 'network:router_interface',
        host: 'fuzz-host',
      }),
  },
  {
    name: 'fencing worker host.down intake',
    queue: QUEUES.hostDown,
    bad: fc.oneof(genericBadMessage(), malformedEvent('host.down')),
    good: null,
  },
  {
    name: 'evacuation worker recovery intake',
    queue: QUEUES.hostRecovery,
    bad: fc.oneof(genericBadMessage(), malformedEvent('host.recovery.requested')),
    good: null,
  },
];

describe('every consumer fed over 10,000 malformed messages', { timeout: 600_000 }, () => {
  let deployment: SimulatedDeployment;
  let raw: AmqpClient;
  const deadLetters = new Map<string, { queue: string; reason: string }>();
  const replies = new Map<string, Record<string, unknown>>();

  before(async () => {
    deployment = await SimulatedDeployment.start({
      label: 'fuzz',
      cloud: {
        ...FAST_CLOUD_TIMINGS,
      },
      instanceHa: { ...FAST_INSTANCE_HA },
    });
    raw = await AmqpClient.connect({
      url: deployment.vhost.url,
      connectionName: 'fuzz',
      service: 'fuzz',
      logger: createLogger({ service: 'fuzz', level: 'silent' }),
    });
    await raw.declare(async (channel) => {
      await channel.assertQueue(REPLY_QUEUE, { durable: false, arguments: { 'x-expires': 600_000 } });
    });
    await raw.consume({
      queue: REPLY_QUEUE,
      prefetch: 500,
      contract: 'reply',
      decode: (content) => decodeOsloBody(content),
      handler: async (reply) => {
        const message = reply as Record<string, unknown>;
        if (message.ending === true) replies.set(String(message._msg_id), message);
      },
    });
    await raw.consume({
      queue: DEAD_LETTER_QUEUE,
      prefetch: 500,
      contract: 'dead letter',
      decode: (content) => content,
      handler: async (_body, message) => {
        const headers = message.properties.headers ?? {};
        deadLetters.set(String(message.properties.messageId), {
          queue: String(headers[DEAD_LETTER_HEADERS.queue]),
          reason: String(headers[DEAD_LETTER_HEADERS.reason] ?? ''),
        });
      },
    });
  });

  after(async () => {
    await raw?.close();
    await deployment?.stop();
  });

  it('no consumer crashes or stalls; each bad message is dead-lettered with its reason or answered with a failure; every good one is processed', async (t) => {
    t.diagnostic(`seed ${SEED} (LIFEGUARD_FUZZ_SEED=${SEED} reproduces this run)`);
    const { sim, timeline, layout, run } = deployment;
    // The good traffic of the fencing and evacuation intakes: a real incident, from kill to re-enable.
    const source = layout.protectedHosts[0]!;
    sim.killHost(source);

    const sent: Array<{ id: string; target: Target; message: FuzzMessage }> = [];
    const good = new Map<string, number>();
    const publish = (queue: string, body: Buffer, messageId: string, headers: Record<string, unknown> = {}) =>
      raw.publish('', queue, body, { messageId, headers, persistent: false, mandatory: true });
    for (const [targetIndex, target] of targets.entries()) {
      const bad = [
        ...fc.sample(target.bad, { seed: SEED + targetIndex, numRuns: BAD_PER_CONSUMER }),
        ...fc.sample(hugeMessage(), { seed: SEED + 100 + targetIndex, numRuns: HUGE_PER_CONSUMER }),
      ];
      for (const [index, message] of bad.entries()) {
        const id = `bad-${targetIndex}-${index}`;
        sent.push({ id, target, message });
        await publish(target.queue, message.body, id, message.headers);
        if (target.good && index % GOOD_EVERY === 0) {
          const goodIndex = index / GOOD_EVERY;
          await publish(target.queue, target.good(goodIndex), `good-${targetIndex}-${goodIndex}`);
          good.set(target.queue, goodIndex + 1);
        }
      }
      // A message with a duplicate id: the first good message again.
      if (target.good) await publish(target.queue, target.good(0), `good-${targetIndex}-dup`);
    }
    const kinds = new Map<string, number>();
    for (const { message } of sent) kinds.set(message.kind, (kinds.get(message.kind) ?? 0) + 1);
    t.diagnostic(
      `${sent.length} malformed messages sent to ${targets.length} consumers: ${JSON.stringify(Object.fromEntries(kinds))}`,
    );
    assert.ok(sent.length >= 10_000);

    const down = await timeline.waitFor('host.down', (each) => each.data.host === source, 60_000);
    // Duplicates of the real host.down and, once it comes, of the real recovery request.
    for (let copy = 0; copy < 5; copy++) await publish(QUEUES.hostDown, eventBody(down), `dup-down-${copy}`);

    const accounted = (entry: (typeof sent)[number]) =>
      entry.message.unanswerable === true ||
      deadLetters.has(entry.id) ||
      (entry.message.msgId !== undefined && replies.has(entry.message.msgId));
    await waitFor(
      'every malformed message dead-lettered or answered',
      () => sent.every(accounted),
      240_000,
      500,
    ).catch((error: unknown) => {
      const missing = sent.filter((entry) => !accounted(entry)).slice(0, 5);
      throw new Error(
        `${(error as Error).message}; e.g. ${missing.map((entry) => `${entry.id} (${entry.target.name}, ${entry.message.kind}): ${entry.message.body.subarray(0, 200).toString()}`).join(' | ')}`,
      );
    });
    for (const entry of sent) {
      const dead = deadLetters.get(entry.id);
      if (dead) {
        assert.equal(dead.queue, entry.target.queue, `${entry.id} dead-lettered from its queue`);
        assert.ok(dead.reason.length > 0, `${entry.id} dead-lettered with a reason`);
      } else if (entry.message.msgId !== undefined) {
        const reply = replies.get(entry.message.msgId)!;
        assert.ok(
          reply.failure !== null || entry.message.kind === 'malformed-oslo',
          `${entry.id}: ${JSON.stringify(reply)}`,
        );
      }
    }

    // The good messages: processed, none dead-lettered.
    const goodDeadLetters = [...deadLetters.keys()].filter(
      (id) => id.startsWith('good-') || id.startsWith('dup-'),
    );
    assert.deepEqual(goodDeadLetters, [], 'no good message was dead-lettered');
    const goodCalls = good.get('q-plugin') ?? 0;
    await waitFor('a reply to every good call', () => {
      for (let index = 0; index < goodCalls; index++) {
        if (!replies.has(`900d${String(index).padStart(28, '0')}`)) return false;
      }
      return true;
    });
    for (let index = 0; index < goodCalls; index++) {
      const reply = replies.get(`900d${String(index).padStart(28, '0')}`)!;
      assert.deepEqual([reply.result, reply.failure], [true, null]);
    }
    await waitFor(
      'every good record command applied',
      async () =>
        (await run.metric('provisioning-blocks', 'lifeguard_provisioning_commands_total', {
          command: 'network.create',
          outcome: 'applied',
        })) === good.get(QUEUES.provisioningCommands),
    );
    await waitFor(
      'every good agent report registered',
      async () =>
        (await run.metric('provisioning-blocks', 'lifeguard_provisioning_agent_reports_total', {
          status: 'new',
        })) >= (good.get(QUEUES.nativeAgents) ?? 0),
    );
    const reenabled = await timeline.waitFor(
      'host.reenabled',
      (each) => each.data.host === source && each.data.incidentId === down.data.incidentId,
      180_000,
    );
    const incident = timeline.forIncident(down.data.incidentId).map((each: LifeguardEvent) => each.type);
    assert.equal(incident.filter((type) => type === 'host.fenced').length, 1, 'fenced once');
    assert.ok(reenabled);

    // Nothing stalled: every queue drained, every consumer still there, every worker ready.
    for (const target of targets) {
      await waitFor(`${target.queue} drained`, async () => {
        const queue = await deployment.vhost.get<{ messages: number; consumers: number }>(
          `queues/${target.queue}`,
        );
        return queue.messages === 0 && queue.consumers >= 1;
      });
    }
    for (const worker of run.stack.workers) {
      assert.ok(worker.running, `${worker.name} is running`);
      const ready = await fetch(`${worker.baseUrl}/readyz`);
      assert.equal(ready.status, 200, `${worker.name} is ready`);
    }
  });
});

function eventBody(event: LifeguardEvent): Buffer {
  return Buffer.from(JSON.stringify(event));
}
