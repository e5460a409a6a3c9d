import { randomUUID } from 'node:crypto';
import {
  ContractViolationError,
  decodeOsloBody,
  OSLO_TOPOLOGY,
  osloFanoutExchange,
  osloServerQueue,
  peekOsloReplyAddress,
} from '@lifeguard/contracts';
import type { AmqpClient, ManagedConsumer, RedisClient } from '@lifeguard/runtime';
import type { Channel } from 'amqplib';
import type { Logger } from 'pino';
import type { ProvisioningMetrics } from '../metrics.ts';
import type { ProvisioningKeys } from '../store/provisioning-keys.ts';
import type { RpcTopic } from './oslo-dispatcher.ts';
import { type OsloQueueOptions, osloDeclarations } from './oslo-queue-arguments.ts';
import { OsloReplySender } from './oslo-reply-sender.ts';
import { OsloRequestHandler, UndecodableCall } from './oslo-request-handler.ts';

export interface OsloRpcServerOptions {
  /** The connection to the agents' vhost. */
  amqp: AmqpClient;
  redis: RedisClient;
  keys: ProvisioningKeys;
  /** The control exchange (`neutron`). */
  exchange: string;
  /** This server's name: the `<topic>.<server>` queues (oslo's `server`, Neutron's `host`). */
  serverName: string;
  topics: ReadonlyArray<RpcTopic>;
  /** Unacknowledged requests per queue consumer. */
  prefetch: number;
  /** oslo's queue options (amqp_durable_queues, rabbit_quorum_queue, rabbit_transient_queues_ttl, ...). */
  queueOptions: OsloQueueOptions;
  /** How long a handled `_unique_id` is remembered (with its reply), in seconds. */
  handledTtlSeconds: number;
  /** See OsloReplySender. */
  missingReplyQueueRetrySeconds: number;
  logger: Logger;
  metrics?: ProvisioningMetrics | null;
}

const hex32 = () => randomUUID().replaceAll('-', '');

/**
 * An oslo.messaging RPC server on AMQP that real oslo clients (Neutron agents) call (docs/oslo-messaging.md#server-checklist).
 * It declares, like oslo's rabbit driver, the control exchange, the `<topic>` and `<topic>.<server>`
 * queues and the `<topic>_fanout` exchange with a `<topic>_fanout_<hex>` queue, with oslo's flags, and
 * consumes them with manual acknowledgement. A request is acknowledged only after its effect is
 * committed in Redis and, for a call, its reply confirmed by RabbitMQ (oslo acknowledges first and
 * can lose a request on a crash); duplicates and redeliveries are suppressed by `_unique_id`
 * remembered in Redis (a repeated call gets the remembered reply again; see OsloRequestHandler);
 * calls get exactly one reply with `ending: true` and, while a method runs, call-monitor heartbeats
 * when `_timeout` is an integer ≥ 2. Unparseable bodies and bad casts are dead-lettered with the
 * reason; bad calls get an oslo failure reply, a call with an unsupported envelope too (then it is
 * dead-lettered).
 *
 * Never let this server share `q-plugin` with a real neutron-server: the two would split every
 * agent request between them (docs/neutron-provisioning-rules.md#agent-topics).
 */
export class OsloRpcServer {
  private readonly consumers: Array<ManagedConsumer<Record<string, unknown> | UndecodableCall>> = [];
  private readonly replies: OsloReplySender;
  private readonly requests: OsloRequestHandler;
  /** Requests being handled in this process, by `_unique_id`: a copy arriving meanwhile waits for the first. */
  private readonly handling = new Map<string, Promise<void>>();

  constructor(private readonly options: OsloRpcServerOptions) {
    this.replies = new OsloReplySender({
      amqp: options.amqp,
      logger: options.logger,
      missingQueueRetrySeconds: options.missingReplyQueueRetrySeconds,
    });
    this.requests = new OsloRequestHandler({
      redis: options.redis,
      keys: options.keys,
      replies: this.replies,
      handledTtlSeconds: options.handledTtlSeconds,
      logger: options.logger,
      metrics: options.metrics ?? null,
    });
  }

  /** The queues this server consumes, per topic: topic queue, server queue, fanout queue. */
  readonly queues: Array<{ topic: string; queue: string; kind: 'topic' | 'server' | 'fanout' }> = [];

  /**
   * Declares the topology and starts consuming.
   * @throws Error naming the exchange or queue when the broker refuses a declaration (406: it exists
   *   with other flags, e.g. durable — set the durable-queues option to the deployment's)
   */
  async start(): Promise<void> {
    const { amqp, exchange, serverName, prefetch, logger } = this.options;
    const declarations = osloDeclarations(this.options.queueOptions);
    const declareControl = async (channel: Channel) => {
      await channel.assertExchange(
        exchange,
        OSLO_TOPOLOGY.controlExchange.type,
        declarations.controlExchange,
      );
    };
    for (const { topic, endpoints } of this.options.topics) {
      const fanoutQueue = `${osloFanoutExchange(topic)}_${hex32()}`;
      const plan: Array<{
        queue: string;
        kind: 'topic' | 'server' | 'fanout';
        declare: (channel: Channel) => Promise<void>;
      }> = [
        {
          queue: topic,
          kind: 'topic',
          declare: async (channel) => {
            await declareControl(channel);
            await channel.assertQueue(topic, declarations.topicQueue);
            await channel.bindQueue(topic, exchange, topic);
          },
        },
        {
          queue: osloServerQueue(topic, serverName),
          kind: 'server',
          declare: async (channel) => {
            const queue = osloServerQueue(topic, serverName);
            await declareControl(channel);
            await channel.assertQueue(queue, declarations.topicQueue);
            await channel.bindQueue(queue, exchange, queue);
          },
        },
        {
          queue: fanoutQueue,
          kind: 'fanout',
          declare: async (channel) => {
            const fanoutExchange = osloFanoutExchange(topic);
            await channel.assertExchange(
              fanoutExchange,
              OSLO_TOPOLOGY.fanoutExchange.type,
              declarations.fanoutExchange,
            );
            await channel.assertQueue(fanoutQueue, declarations.fanoutQueue);
            await channel.bindQueue(fanoutQueue, fanoutExchange, topic);
          },
        },
      ];
      for (const { queue, kind, declare } of plan) {
        try {
          const consumer = await amqp.consume<Record<string, unknown> | UndecodableCall>({
            queue,
            prefetch,
            contract: 'oslo request',
            declare,
            decode: (content) => decodeRequest(content),
            handler: (inner) => this.handle(topic, endpoints, inner),
            retryDelayMilliseconds: 500,
          });
          this.consumers.push(consumer);
          this.queues.push({ topic, queue, kind });
        } catch (error) {
          throw new Error(
            `cannot declare or consume oslo queue "${queue}" on exchange "${exchange}": ${(error as Error).message}` +
              ' (when it exists with other flags, set LIFEGUARD_PROVISIONING_RPC_DURABLE_QUEUES and LIFEGUARD_PROVISIONING_RPC_QUORUM_QUEUE to the deployment’s amqp_durable_queues and rabbit_quorum_queue)',
            { cause: error },
          );
        }
      }
    }
    logger.info(
      { exchange, server: serverName, queues: this.queues.map((each) => each.queue) },
      'oslo RPC server consuming',
    );
  }

  /** Stops consuming, waits for requests in flight, then for their replies (at most `timeoutMilliseconds`). */
  async stop(timeoutMilliseconds = 10_000): Promise<void> {
    await Promise.all(this.consumers.map((consumer) => consumer.stop(timeoutMilliseconds)));
    await this.replies.drain(timeoutMilliseconds);
  }

  /** True while every queue has a live consumer. */
  get isConsuming(): boolean {
    return this.consumers.length > 0 && this.consumers.every((consumer) => consumer.isConsuming);
  }

  /**
   * Handles one request; copies of a request being handled in this process (same `_unique_id`) wait
   * for the first and then find its handled marker.
   */
  private async handle(
    topic: string,
    endpoints: RpcTopic['endpoints'],
    inner: Record<string, unknown> | UndecodableCall,
  ): Promise<void> {
    if (inner instanceof UndecodableCall) return this.requests.answerUndecodable(topic, inner);
    const uniqueId = typeof inner._unique_id === 'string' ? inner._unique_id : null;
    if (uniqueId === null) return this.requests.handle(topic, endpoints, inner);
    for (let earlier = this.handling.get(uniqueId); earlier; earlier = this.handling.get(uniqueId)) {
      await earlier.catch(() => undefined);
    }
    const running = this.requests.handle(topic, endpoints, inner);
    this.handling.set(uniqueId, running);
    try {
      await running;
    } finally {
      if (this.handling.get(uniqueId) === running) this.handling.delete(uniqueId);
    }
  }
}

/**
 * Decodes a request body (decodeOsloBody); a body refused by the decoder that still names a reply
 * queue (e.g. an `oslo.version` other than 2.0) becomes an UndecodableCall, answered and then
 * dead-lettered.
 * @throws ContractViolationError for any other refused body (dead-lettered with the reason)
 */
function decodeRequest(content: Buffer): Record<string, unknown> | UndecodableCall {
  try {
    return decodeOsloBody(content);
  } catch (error) {
    const address = error instanceof ContractViolationError ? peekOsloReplyAddress(content) : null;
    if (address === null) throw error;
    return new UndecodableCall((error as Error).message, address);
  }
}
