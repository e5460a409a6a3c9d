import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  AGENT_RPC_METHODS,
  type AgentRpcMethod,
  ContractViolationError,
  decodeOsloBody,
  encodeOsloBody,
  NEUTRON_RPC,
  OSLO_TOPOLOGY,
  OsloFailure,
  OsloReply,
  OsloRequest,
  parseWith,
} from '../src/index.ts';

const fixtureDirectory = join(import.meta.dirname, 'fixtures', 'oslo');
const fixtureFiles = readdirSync(fixtureDirectory).filter((name) => name.endsWith('.json'));

/** Every AMQP body captured in a fixture file, wherever it sits in the JSON tree. */
function capturedBodies(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) for (const child of node) capturedBodies(child, found);
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'body_raw' && typeof value === 'string') found.push(value);
      else capturedBodies(value, found);
    }
  }
  return found;
}

interface ParsedMessage {
  kind: 'request' | 'reply';
  inner: Record<string, unknown>;
}

/** Parses one captured body with the contracts, as the RPC server and a reply reader would. */
function parseCaptured(body: string): ParsedMessage {
  const inner = decodeOsloBody(body);
  if ('method' in inner) {
    const request = parseWith(OsloRequest, inner, 'oslo request');
    if (request.method in AGENT_RPC_METHODS) {
      parseWith(
        AGENT_RPC_METHODS[request.method as AgentRpcMethod].args,
        request.args,
        `${request.method} args`,
      );
    }
    return { kind: 'request', inner };
  }
  const reply = parseWith(OsloReply, inner, 'oslo reply');
  if (typeof reply.failure === 'string') parseWith(OsloFailure, JSON.parse(reply.failure), 'oslo failure');
  return { kind: 'reply', inner };
}

/** The message's error must be a ContractViolationError naming `field`. */
function assertRejectedNaming(action: () => unknown, field: string): void {
  assert.throws(action, (error: unknown) => {
    assert.ok(
      error instanceof ContractViolationError,
      `expected ContractViolationError, got ${String(error)}`,
    );
    assert.match(error.message, new RegExp(field.replace(/[.]/g, '\\.')));
    return true;
  });
}

describe('oslo.messaging wire captures (fixtures/oslo)', () => {
  it('has the 17 captured files', () => {
    assert.equal(fixtureFiles.length, 17);
  });

  const messageFixtures = fixtureFiles.filter(
    (name) => name !== '00_topology.json' && name !== '16_minimal_server_validation.json',
  );
  for (const file of messageFixtures) {
    const fixture: unknown = JSON.parse(readFileSync(join(fixtureDirectory, file), 'utf8'));
    const bodies = capturedBodies(fixture);

    it(`${file}: every captured body parses with the contracts`, () => {
      assert.ok(bodies.length > 0, 'fixture holds at least one body');
      for (const body of bodies) parseCaptured(body);
    });

    it(`${file}: a corrupted copy of every body is rejected, naming the bad field`, () => {
      for (const body of bodies) {
        const { kind, inner } = parseCaptured(body);
        const reencode = (message: Record<string, unknown>) => encodeOsloBody(message);
        if (kind === 'request') {
          assertRejectedNaming(() => parseCaptured(reencode({ ...inner, method: 42 })), 'method');
          if (inner._unique_id !== undefined) {
            assertRejectedNaming(
              () => parseCaptured(reencode({ ...inner, _unique_id: 'not-hex' })),
              '_unique_id',
            );
          }
          const method = inner.method as string;
          if (method in AGENT_RPC_METHODS) {
            const args = inner.args as Record<string, unknown>;
            const firstArgument = Object.keys(args)[0]!;
            assertRejectedNaming(
              () => parseCaptured(reencode({ ...inner, args: { ...args, [firstArgument]: { bad: true } } })),
              firstArgument,
            );
          }
        } else {
          assertRejectedNaming(() => parseCaptured(reencode({ ...inner, ending: 'yes' })), 'ending');
          assertRejectedNaming(() => parseCaptured(reencode({ ...inner, _msg_id: undefined })), '_msg_id');
          if (typeof inner.failure === 'string') {
            const failure = JSON.parse(inner.failure) as Record<string, unknown>;
            delete failure.class;
            assertRejectedNaming(
              () => parseCaptured(reencode({ ...inner, failure: JSON.stringify(failure) })),
              'class',
            );
          }
        }
        const envelope = JSON.parse(body) as Record<string, unknown>;
        if ('oslo.version' in envelope) {
          assertRejectedNaming(
            () => parseCaptured(JSON.stringify({ ...envelope, 'oslo.version': '3.0' })),
            'oslo.version',
          );
          assertRejectedNaming(
            () => parseCaptured(JSON.stringify({ ...envelope, 'oslo.message': '{not json' })),
            'oslo.message',
          );
        }
      }
    });
  }

  describe('16_minimal_server_validation.json: reply shapes tried against a real oslo client', () => {
    const fixture = JSON.parse(
      readFileSync(join(fixtureDirectory, '16_minimal_server_validation.json'), 'utf8'),
    ) as {
      reply_cases: Array<{ method: string; server_published: Array<{ body_raw: string }> }>;
    };
    // The client failed on these two because of the reply's shape; every other failing case failed
    // for its AMQP properties or its timing, which a body schema cannot see.
    const rejectedForShape: Record<string, string> = {
      missing_failure_key: 'failure',
      missing_msg_id: '_msg_id',
    };
    for (const replyCase of fixture.reply_cases) {
      const field = rejectedForShape[replyCase.method];
      it(`${replyCase.method}: ${field ? `rejected, naming ${field}` : 'accepted'}`, () => {
        for (const published of replyCase.server_published) {
          if (field) assertRejectedNaming(() => parseCaptured(published.body_raw), field);
          else assert.equal(parseCaptured(published.body_raw).kind, 'reply');
        }
      });
    }
  });

  it('00_topology.json: oslo declares the control exchange and topic queues as OSLO_TOPOLOGY says', () => {
    const topology = JSON.parse(readFileSync(join(fixtureDirectory, '00_topology.json'), 'utf8')) as {
      exchanges: Array<{ name: string; type: string; durable: boolean; auto_delete: boolean }>;
      queues: Array<{ name: string; durable: boolean; auto_delete: boolean; arguments: unknown[][] }>;
    };
    const control = topology.exchanges.find((exchange) => exchange.name === NEUTRON_RPC.controlExchange)!;
    assert.deepEqual(
      { type: control.type, durable: control.durable, autoDelete: control.auto_delete },
      OSLO_TOPOLOGY.controlExchange,
    );
    const fanout = topology.exchanges.find(
      (exchange) => exchange.name === `${NEUTRON_RPC.pluginTopic}_fanout`,
    )!;
    assert.deepEqual(
      { type: fanout.type, durable: fanout.durable, autoDelete: fanout.auto_delete },
      OSLO_TOPOLOGY.fanoutExchange,
    );
    for (const name of [NEUTRON_RPC.pluginTopic, NEUTRON_RPC.reportsTopic]) {
      const queue = topology.queues.find((each) => each.name === name)!;
      assert.deepEqual(
        {
          durable: queue.durable,
          autoDelete: queue.auto_delete,
          arguments: Object.fromEntries(queue.arguments),
        },
        {
          durable: OSLO_TOPOLOGY.topicQueue.durable,
          autoDelete: OSLO_TOPOLOGY.topicQueue.autoDelete,
          arguments: {},
        },
      );
    }
    const reply = topology.queues.find((each) => each.name.startsWith('reply_'))!;
    assert.equal(reply.arguments[0]?.[0], 'x-expires');
    assert.equal(reply.arguments[0]?.[2], OSLO_TOPOLOGY.transientQueue.arguments['x-expires']);
  });

  it('a bare (pre-envelope) message is accepted as oslo accepts it', () => {
    const inner = decodeOsloBody(JSON.stringify({ method: 'update_device_up', args: { device: 'p1' } }));
    assert.equal(parseWith(OsloRequest, inner, 'oslo request').version, '1.0');
  });

  it('a body that is not JSON is rejected with a clear reason', () => {
    assert.throws(() => decodeOsloBody('\u0000garbage'), /body is not JSON/);
  });
});
