// The traffic floor of bench/provisioning: a bare amqplib process that puts on RabbitMQ exactly the
// messages the provisioning path puts there, and does nothing else (no Redis, no blocks, no outbox).
// Per request on q-plugin: the oslo body decoded, the reply published with a confirm, for an
// `update_device_up` (one per port, as one provisioning.complete per port) a persistent
// `provisioning.complete` event published with a confirm to the events exchange (routed to the
// port-status subscriber's quorum queue and the benchmark's watcher, as the service's are), and the
// request acked after its confirms. With BENCH_FLOOR_LAYOUT=stack it also consumes the port-status
// subscriber's queue and publishes a `port.status.changed` event per event, as the subscriber does.
// Its rate is the most any provisioning service can reach on the same machine: what the service adds
// to it is the service's own cost. Started as its own process by run.ts.
//
// Environment: BENCH_AMQP_URL, BENCH_PREFETCH, BENCH_QUORUM (q-plugin a quorum queue, as in cluster
// mode), BENCH_FLOOR_LAYOUT (service | stack).
import { randomUUID } from 'node:crypto';
import {
  decodeOsloBody,
  EVENTS_EXCHANGE,
  encodeOsloBody,
  OSLO_MESSAGE_PROPERTIES,
  QUEUES,
} from '@lifeguard/contracts';
import {
  DEFAULT_OSLO_QUEUE_OPTIONS,
  declareNovaPortNotificationsQueue,
  declareProvisioningCompleteQueue,
  osloDeclarations,
} from '@lifeguard/provisioning-blocks';
import amqp, { type ConfirmChannel, type ConsumeMessage } from 'amqplib';

const url = process.env.BENCH_AMQP_URL!;
const prefetch = Number(process.env.BENCH_PREFETCH ?? 100);
const stack = process.env.BENCH_FLOOR_LAYOUT === 'stack';
const declarations = osloDeclarations({
  ...DEFAULT_OSLO_QUEUE_OPTIONS,
  quorumQueue: process.env.BENCH_QUORUM === '1',
});

const connection = await amqp.connect(url);
const consuming = await connection.createChannel();
const publishing = await connection.createConfirmChannel();
await consuming.assertExchange('neutron', 'topic', declarations.controlExchange);
await consuming.assertQueue('q-plugin', declarations.topicQueue);
await consuming.bindQueue('q-plugin', 'neutron', 'q-plugin');
await declareProvisioningCompleteQueue(consuming);
await declareNovaPortNotificationsQueue(consuming);
await consuming.prefetch(prefetch);

/** Publishes with a confirm; resolves on the broker's ack. */
const publish = (
  channel: ConfirmChannel,
  exchange: string,
  routingKey: string,
  body: string,
  options: amqp.Options.Publish,
) =>
  new Promise<void>((resolve, reject) => {
    channel.publish(exchange, routingKey, Buffer.from(body), options, (error) =>
      error ? reject(error) : resolve(),
    );
  });

/** An event with the properties every lifeguard event has (persistent, id, type, schema header). */
function publishEvent(type: string, routingKey: string, data: Record<string, unknown>): Promise<void> {
  const id = randomUUID();
  const occurredAt = new Date().toISOString();
  return publish(
    publishing,
    EVENTS_EXCHANGE,
    routingKey,
    JSON.stringify({ id, type, occurredAt, schemaVersion: 1, data }),
    {
      persistent: true,
      mandatory: true,
      messageId: id,
      type,
      contentType: 'application/json',
      timestamp: Math.floor(Date.now() / 1000),
      headers: { 'x-schema-version': 1 },
    },
  );
}

/** Acks a message once `work` is done, requeues it when it failed. */
function settle(message: ConsumeMessage, work: Promise<unknown>): void {
  work.then(
    () => consuming.ack(message),
    () => consuming.nack(message, false, true),
  );
}

await consuming.consume('q-plugin', (message) => {
  if (!message) return;
  const request = decodeOsloBody(message.content) as {
    method: string;
    args: { device?: string };
    _reply_q?: string;
    _msg_id?: string;
  };
  const work: Array<Promise<void>> = [];
  if (request._reply_q && request._msg_id) {
    const reply = {
      result: null,
      failure: null,
      ending: true,
      _msg_id: request._msg_id,
      _unique_id: randomUUID(),
    };
    work.push(
      publish(publishing, '', request._reply_q, encodeOsloBody(reply), {
        ...OSLO_MESSAGE_PROPERTIES,
        mandatory: true,
      }),
    );
  }
  if (request.method === 'update_device_up' && request.args.device) {
    work.push(
      publishEvent('provisioning.complete', 'provisioning.complete.port', {
        objectType: 'port',
        objectId: request.args.device,
      }),
    );
  }
  settle(message, Promise.all(work));
});

if (stack) {
  await consuming.consume(QUEUES.provisioningComplete, (message) => {
    if (!message) return;
    const event = JSON.parse(message.content.toString()) as { data: { objectId: string } };
    settle(
      message,
      publishEvent('port.status.changed', 'port.status.changed', {
        portId: event.data.objectId,
        status: 'ACTIVE',
      }),
    );
  });
}

process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void connection.close().finally(() => process.exit(0));
});
