import { randomUUID } from 'node:crypto';
import {
  ContractViolationError,
  decodeOsloBody,
  OSLO_TOPOLOGY,
  type OsloFailure,
  osloFanoutExchange,
  osloServerQueue,
  parseWith,
} from '@lifeguard/contracts';
import { type AmqpClient, type ManagedConsumer, RejectedMessageError } from '@lifeguard/runtime';
import type { Channel } from 'amqplib';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RpcMethodError } from '../errors.ts';
import type { ProvisioningMetrics } from '../metrics.ts';
import type { ProvisioningKeys } from '../store/provisioning-keys.ts';
import { ALREADY_HANDLED, methodFailure, type RpcTopic, selectMethod } from './oslo-dispatcher.ts';
import { OsloReplySender } from './oslo-reply-sender.ts';
import { readOsloRequest } from './oslo-request.ts';

export interface OsloRpcServerOptions {
  /** The connection to the agents' vhost. */
  amqp: AmqpClient;
  redis: Redis;
  keys: ProvisioningKeys;
  /** The control exchange (`neutron`). */
  exchange: string;
  /** This server's name: the `<topic>.<server>` queues (oslo's `server`, Neutron's `host`). */
  serverName: string;
  topics: ReadonlyArray<RpcTopic>;
  /** Unacknowledged requests per queue consumer. */
  prefetch: number;
  /** oslo's amqp_durable_queues: the control exchange and topic queues are durable (default false). */
  durableQueues: boolean;
  /** oslo's rabbit_transient_queues_ttl in seconds: `x-expires` of the fanout queues (0: none). */
  transientQueueTtlSeconds: number;
  /** How long a handled `_unique_id` is remembered (with its reply), in seconds. */
  handledTtlSeconds: number;
  /** See OsloReplySender. */
  missingReplyQueueRetrySeconds: number;
  logger: Logger;
  metrics?: ProvisioningMetrics | null;
}

const hex32 = () => randomUUID().replaceAll('-', '');

/** What a handled request is remembered as: the reply of a call, nothing for a cast. */
interface HandledRecord {
  result?: unknown;
  failure?: string | null;
}

/**
 * An oslo.messaging RPC server on AMQP that real oslo clients (Neutron agents) call (docs/oslo-messaging.md#server-checklist).
 * It declares, like oslo's rabbit driver, the control exchange, the `<topic>` and `<topic>.<server>`
 * queues and the `<topic>_fanout` exchange with a `<topic>_fanout_<hex>` queue, with oslo's flags, and
 * consumes them with manual acknowledgement. A request is acknowledged only after its effect is
 * committed in Redis (oslo acknowledges first and can lose a request on a crash); duplicates are
 * suppressed by `_unique_id` remembered in Redis (a duplicate call gets the remembered reply again);
 * calls get exactly one reply with `ending: true` and, while a method runs, call-monitor heartbeats
 * when `_timeout` is an integer ≥ 2. Unparseable bodies and bad casts are dead-lettered with the
 * reason; bad calls get an oslo failure reply.
 *
 * Never let this server share `q-plugin` with a real neutron-server: the two would split every
 * agent request between them (docs/neutron-provisioning-rules.md#agent-topics).
 */
export class OsloRpcServer {
  private readonly consumers: Array<ManagedConsumer<Record<string, unknown>>> = [];
  private readonly replies: OsloReplySender;
  /** Requests being handled in this process, by `_unique_id`: a copy arriving meanwhile waits for the first. */
  private readonly handling = new Map<string, Promise<void>>();

  constructor(private readonly options: OsloRpcServerOptions) {
    this.replies = new OsloReplySender({
      amqp: options.amqp,
      logger: options.logger,
      missingQueueRetrySeconds: options.missingReplyQueueRetrySeconds,
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
    const { amqp, exchange, serverName, durableQueues, transientQueueTtlSeconds, prefetch, logger } =
      this.options;
    const declareControl = async (channel: Channel) => {
      await channel.assertExchange(exchange, OSLO_TOPOLOGY.controlExchange.type, {
        durable: durableQueues,
        autoDelete: false,
      });
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
            await channel.assertQueue(topic, { ...OSLO_TOPOLOGY.topicQueue, durable: durableQueues });
            await channel.bindQueue(topic, exchange, topic);
          },
        },
        {
          queue: osloServerQueue(topic, serverName),
          kind: 'server',
          declare: async (channel) => {
            const queue = osloServerQueue(topic, serverName);
            await declareControl(channel);
            await channel.assertQueue(queue, { ...OSLO_TOPOLOGY.topicQueue, durable: durableQueues });
            await channel.bindQueue(queue, exchange, queue);
          },
        },
        {
          queue: fanoutQueue,
          kind: 'fanout',
          declare: async (channel) => {
            const fanoutExchange = osloFanoutExchange(topic);
            await channel.assertExchange(fanoutExchange, OSLO_TOPOLOGY.fanoutExchange.type, {
              durable: OSLO_TOPOLOGY.fanoutExchange.durable,
              autoDelete: OSLO_TOPOLOGY.fanoutExchange.autoDelete,
            });
            await channel.assertQueue(fanoutQueue, {
              durable: false,
              autoDelete: false,
              exclusive: false,
              arguments: transientQueueTtlSeconds > 0 ? { 'x-expires': transientQueueTtlSeconds * 1000 } : {},
            });
            await channel.bindQueue(fanoutQueue, fanoutExchange, topic);
          },
        },
      ];
      for (const { queue, kind, declare } of plan) {
        try {
          const consumer = await amqp.consume<Record<string, unknown>>({
            queue,
            prefetch,
            contract: 'oslo request',
            declare,
            decode: (content) => decodeOsloBody(content),
            handler: (inner) => this.handle(topic, endpoints, inner),
            retryDelayMilliseconds: 500,
          });
          this.consumers.push(consumer);
          this.queues.push({ topic, queue, kind });
        } catch (error) {
          throw new Error(
            `cannot declare or consume oslo queue "${queue}" on exchange "${exchange}": ${(error as Error).message}` +
              ' (when it exists with other flags, set LIFEGUARD_PROVISIONING_RPC_DURABLE_QUEUES to the deployment’s amqp_durable_queues)',
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

  private async handle(
    topic: string,
    endpoints: RpcTopic['endpoints'],
    inner: Record<string, unknown>,
  ): Promise<void> {
    const uniqueId = typeof inner._unique_id === 'string' ? inner._unique_id : null;
    if (uniqueId === null) return this.handleOnce(topic, endpoints, inner);
    for (let earlier = this.handling.get(uniqueId); earlier; earlier = this.handling.get(uniqueId)) {
      await earlier.catch(() => undefined);
    }
    const running = this.handleOnce(topic, endpoints, inner);
    this.handling.set(uniqueId, running);
    try {
      await running;
    } finally {
      if (this.handling.get(uniqueId) === running) this.handling.delete(uniqueId);
    }
  }

  private async handleOnce(
    topic: string,
    endpoints: RpcTopic['endpoints'],
    inner: Record<string, unknown>,
  ): Promise<void> {
    const { redis, keys, metrics, handledTtlSeconds, logger } = this.options;
    const started = process.hrtime.bigint();
    const replyQueue = typeof inner._reply_q === 'string' ? inner._reply_q : null;
    const msgId = typeof inner._msg_id === 'string' ? inner._msg_id : null;
    const isCall = replyQueue !== null && msgId !== null;
    const methodName = typeof inner.method === 'string' ? inner.method : '(none)';

    const parsed = readOsloRequest(inner);
    if (!parsed.success) {
      const problem = new ContractViolationError(
        'oslo request',
        parsed.error.issues.map((issue) => ({ path: issue.path.map(String), message: issue.message })),
      );
      metrics?.rpcRequests.inc({ method: methodName, outcome: isCall ? 'failure' : 'rejected' });
      if (!isCall) throw problem;
      this.replies.send(replyQueue, {
        result: null,
        failure: JSON.stringify(methodFailure('ValueError', 'builtins', problem.message)),
        ending: true,
        _msg_id: msgId,
        _unique_id: hex32(),
      });
      return;
    }
    const request = parsed.data;
    const handledKey = request._unique_id ? keys.handledRequest(request._unique_id) : null;
    const selected = selectMethod(endpoints, request.method, request.version, request.namespace ?? null);
    // Methods that commit the handled marker with their effect check for duplicates themselves.
    const atomic = !('failure' in selected) && selected.method.recordsHandled === true;
    const duplicate = () => {
      metrics?.duplicatesSuppressed.inc({ source: 'rpc' });
      metrics?.rpcRequests.inc({ method: request.method, outcome: 'duplicate' });
      logger.info(
        { method: request.method, uniqueId: request._unique_id, topic },
        'ignoring duplicate message',
      );
    };
    if (handledKey && !atomic) {
      const remembered = await redis.get(handledKey);
      if (remembered !== null) {
        duplicate();
        if (isCall) {
          const record = JSON.parse(remembered) as HandledRecord;
          this.reply(replyQueue, msgId, record.result ?? null, record.failure ?? null);
        }
        return;
      }
    }

    const requestId = typeof inner._context_request_id === 'string' ? inner._context_request_id : null;
    let result: unknown = null;
    let failure: OsloFailure | null = null;
    let recorded = false;
    if ('failure' in selected) {
      failure = selected.failure;
    } else {
      const timeout = request._timeout;
      const heartbeat =
        isCall && typeof timeout === 'number' && Number.isInteger(timeout) && timeout >= 2
          ? setInterval(
              () =>
                this.replies.send(replyQueue, {
                  result: null,
                  failure: null,
                  ending: false,
                  _msg_id: msgId,
                  _unique_id: hex32(),
                }),
              (timeout * 1000) / 2,
            )
          : null;
      try {
        const args = parseWith(selected.method.args, request.args, `${request.method} arguments`);
        const handled =
          atomic && handledKey
            ? {
                key: handledKey,
                ttlSeconds: handledTtlSeconds,
                value: JSON.stringify(isCall ? { result: null, failure: null } : {}),
              }
            : null;
        result = (await selected.method.handler(args as never, { requestId, handled })) ?? null;
        recorded = handled !== null;
        if (result === ALREADY_HANDLED) {
          duplicate();
          if (isCall) this.reply(replyQueue, msgId, null, null);
          return;
        }
      } catch (error) {
        if (error instanceof ContractViolationError) {
          failure = methodFailure('TypeError', 'builtins', error.message);
        } else if (error instanceof RpcMethodError) {
          failure = methodFailure(error.exceptionClass, error.exceptionModule, error.message);
        } else {
          metrics?.rpcRequests.inc({ method: request.method, outcome: 'error' });
          throw error;
        }
      } finally {
        if (heartbeat) clearInterval(heartbeat);
      }
    }

    const failureText = failure ? JSON.stringify(failure) : null;
    if (!isCall && failure) {
      metrics?.rpcRequests.inc({ method: request.method, outcome: 'rejected' });
      throw new RejectedMessageError(`${failure.class}: ${failure.message}`);
    }
    if (handledKey && !(recorded && !failure)) {
      const record: HandledRecord = isCall ? { result, failure: failureText } : {};
      await redis.set(handledKey, JSON.stringify(record), 'EX', handledTtlSeconds);
    }
    metrics?.rpcRequests.inc({ method: request.method, outcome: failure ? 'failure' : 'ok' });
    metrics?.rpcDurationSeconds.observe(
      { method: request.method },
      Number(process.hrtime.bigint() - started) / 1e9,
    );
    if (isCall) this.reply(replyQueue, msgId, failure ? null : result, failureText);
  }

  private reply(replyQueue: string, msgId: string, result: unknown, failure: string | null): void {
    this.replies.send(replyQueue, { result, failure, ending: true, _msg_id: msgId, _unique_id: hex32() });
  }
}
