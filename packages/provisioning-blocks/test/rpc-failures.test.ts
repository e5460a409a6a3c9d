import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  DEAD_LETTER_HEADERS,
  DEAD_LETTER_QUEUE,
  decodeOsloBody,
  OSLO_MESSAGE_PROPERTIES,
} from '@lifeguard/contracts';
import { type AmqpClient, createLogger } from '@lifeguard/runtime';
import { CapturedLines, createTestVhost, randomKeyPrefix, type TestVhost, waitFor } from '@lifeguard/testing';
import type { GetMessage } from 'amqplib';
import { Registry } from 'prom-client';
import { createProvisioningMetrics } from '../src/metrics.ts';
import { neutronRpcTopics } from '../src/rpc/neutron-endpoints.ts';
import { DEFAULT_OSLO_QUEUE_OPTIONS } from '../src/rpc/oslo-queue-arguments.ts';
import { OsloRpcServer } from '../src/rpc/oslo-rpc-server.ts';
import {
  connectTestAmqp,
  deleteTestKeys,
  rabbitUrl,
  runOsloAgent,
  startTestService,
  type TestService,
} from './support.ts';

const hex = () => randomUUID().replaceAll('-', '');
const EXCHANGE = 'neutron-failures';
// Queue names are per vhost, not per exchange: the server under test has its own topics, so that
// the test service's server does not compete for its requests.
const PLUGIN_TOPIC = 'q-plugin-failures';

/**
 * Calls that fail: every one gets an oslo failure reply (even one whose envelope this server does not
 * speak), is counted as a failure and logged at warn with the method and the reason.
 */
describe('failed RPC calls', () => {
  let vhost: TestVhost;
  let service: TestService;
  let raw: AmqpClient;
  let server: OsloRpcServer;
  const logs = new CapturedLines();
  const registry = new Registry();
  const prefix = randomKeyPrefix('rpc-failures');

  before(async () => {
    vhost = await createTestVhost('rpc-failures');
    // The service declares the vhost's dead-letter topology; the server under test has its own
    // exchange and a logger whose lines the test reads.
    service = await startTestService(vhost.url, prefix);
    raw = await connectTestAmqp(vhost.url, 'rpc-failures-raw');
    server = new OsloRpcServer({
      amqp: service.context.amqp,
      redis: service.context.redis,
      keys: service.provisioning.keys,
      exchange: EXCHANGE,
      serverName: 'failures-host',
      topics: neutronRpcTopics(service.provisioning.callbacks, {
        pluginTopic: PLUGIN_TOPIC,
        reportsTopic: 'q-reports-plugin-failures',
      }),
      // One request at a time, and a reply to a missing queue retried for half a minute: a request
      // held until its reply is settled would hold up every request behind it.
      prefetch: 1,
      queueOptions: { ...DEFAULT_OSLO_QUEUE_OPTIONS, transientQueueTtlSeconds: 60 },
      handledTtlSeconds: 60,
      missingReplyQueueRetrySeconds: 30,
      logger: createLogger({ service: 'test', level: 'info', destination: logs }),
      metrics: createProvisioningMetrics(registry),
    });
    await server.start();
  });
  after(async () => {
    await server.stop();
    await raw.close();
    await service.close();
    await deleteTestKeys([prefix]);
    await vhost.delete();
  });

  async function replyQueueWithReplies(): Promise<{
    queue: string;
    replies: Array<Record<string, unknown>>;
  }> {
    const queue = `reply_${hex()}`;
    const replies: Array<Record<string, unknown>> = [];
    await raw.declare(async (channel) => {
      await channel.assertQueue(queue, { durable: false, arguments: { 'x-expires': 600_000 } });
    });
    await raw.consume({
      queue,
      prefetch: 10,
      contract: 'reply',
      decode: (content) => decodeOsloBody(content),
      handler: async (reply) => {
        replies.push(reply as Record<string, unknown>);
      },
    });
    return { queue, replies };
  }

  async function deadLetter(reason: RegExp): Promise<GetMessage | undefined> {
    return raw.withChannel(async (channel) => {
      for (;;) {
        const message = await channel.get(DEAD_LETTER_QUEUE, { noAck: true });
        if (message === false) return undefined;
        if (reason.test(String(message.properties.headers?.[DEAD_LETTER_HEADERS.reason]))) return message;
      }
    });
  }

  it('a call in an envelope other than 2.0 gets UnsupportedRpcEnvelopeVersion at once and is dead-lettered with the reason', async () => {
    const { queue, replies } = await replyQueueWithReplies();
    const calls = [
      { version: '3.0', msgId: hex() },
      { version: 2, msgId: hex() },
    ];
    for (const { version, msgId } of calls) {
      const inner = {
        method: 'update_device_up',
        args: { device: 'tap1', host: 'compute-1' },
        version: '1.9',
        _msg_id: msgId,
        _reply_q: queue,
        _unique_id: hex(),
        _timeout: null,
      };
      const body = JSON.stringify({ 'oslo.version': version, 'oslo.message': JSON.stringify(inner) });
      await raw.publish(EXCHANGE, PLUGIN_TOPIC, Buffer.from(body), {
        ...OSLO_MESSAGE_PROPERTIES,
        mandatory: true,
      });
    }
    await waitFor('two replies', () => replies.length === 2, 10_000);
    for (const { msgId } of calls) {
      const reply = replies.find((each) => each._msg_id === msgId);
      assert.ok(reply, `a reply to ${msgId}`);
      assert.equal(reply.ending, true);
      assert.equal(reply.result, null);
      const failure = JSON.parse(String(reply.failure)) as Record<string, unknown>;
      assert.equal(failure.class, 'UnsupportedRpcEnvelopeVersion');
      assert.equal(failure.module, 'oslo_messaging._drivers.common');
    }
    assert.match(
      String(JSON.parse(String(replies.find((each) => each._msg_id === calls[0]!.msgId)!.failure)).message),
      /Specified RPC envelope version, 3\.0, not supported by this endpoint\./,
    );
    assert.ok(
      await waitFor('the dead letter of the 3.0 call', () => deadLetter(/unsupported envelope version 3\.0/)),
    );
    assert.ok(await waitFor('the dead letter of the numeric version', () => deadLetter(/oslo\.version/)));
  });

  it('a failed call is counted and logged at warn with the method and the reason', async () => {
    const results = await runOsloAgent({
      url: rabbitUrl(vhost.url),
      exchange: EXCHANGE,
      operations: [
        { kind: 'call', topic: PLUGIN_TOPIC, method: 'no_such_method', version: '1.9', args: {} },
        {
          kind: 'call',
          topic: PLUGIN_TOPIC,
          method: 'update_device_up',
          version: '1.9',
          args: { device: 7 },
        },
      ],
    });
    assert.deepEqual(
      results.map((each) => each.error),
      ['RemoteError', 'TypeError'],
    );
    const warnings = logs
      .records()
      .filter((line) => line.level === 40 && line.msg === 'RPC call failed; the caller gets the failure');
    const unknown = warnings.find((line) => /NoSuchMethod: .*no_such_method/.test(String(line.reason)));
    assert.ok(unknown, `a warning for no_such_method in ${logs.text}`);
    assert.equal(unknown.method, '(unknown)');
    const typeError = warnings.find((line) => line.method === 'update_device_up');
    assert.ok(typeError, 'a warning for update_device_up');
    assert.match(String(typeError.reason), /TypeError: .*device/);
    const metrics = await registry.metrics();
    assert.match(metrics, /rpc_requests_total\{method="\(unknown\)",outcome="failure"\} 1/);
    assert.match(metrics, /rpc_requests_total\{method="update_device_up",outcome="failure"\} 1/);
  });

  it('a call whose reply queue does not exist does not hold up the requests behind it', async () => {
    const { queue, replies } = await replyQueueWithReplies();
    const call = (replyQueue: string, msgId: string) =>
      raw.publish(
        EXCHANGE,
        PLUGIN_TOPIC,
        Buffer.from(
          JSON.stringify({
            'oslo.version': '2.0',
            'oslo.message': JSON.stringify({
              method: 'has_alive_neutron_server',
              args: {},
              version: '1.2',
              _msg_id: msgId,
              _reply_q: replyQueue,
              _unique_id: hex(),
              _timeout: null,
            }),
          }),
        ),
        { ...OSLO_MESSAGE_PROPERTIES, mandatory: true },
      );
    await call(`reply_${hex()}`, hex());
    const behind = hex();
    const sentAt = Date.now();
    await call(queue, behind);
    await waitFor(
      'the reply to the call behind',
      () => replies.some((each) => each._msg_id === behind),
      10_000,
    );
    assert.ok(Date.now() - sentAt < 10_000);
  });
});
