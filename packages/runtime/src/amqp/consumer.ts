import { ContractViolationError, parseWith } from '@lifeguard/contracts';
import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { RejectedMessageError } from '../errors.ts';
import { exportAtZero } from '../http/metrics-registry.ts';
import { AckBatch } from './ack-batch.ts';
import { type AmqpMetrics, MESSAGE_OUTCOMES } from './amqp-metrics.ts';

/**
 * How a consumer reads its queue.
 * - `decode` turns the body into a value (default: UTF-8 JSON); throwing dead-letters the message.
 * - `schema` validates the decoded value; a failure dead-letters the message with the field named.
 * - `handler` does the work; when it resolves the message is acked. When it throws
 *   RejectedMessageError or ContractViolationError the message is dead-lettered with that reason;
 *   any other error requeues it after `retryDelayMilliseconds`.
 */
export interface ConsumerOptions<Payload> {
  queue: string;
  /** Unacked messages the broker may hand this consumer at once. */
  prefetch: number;
  /** Human name of the message contract, used in dead-letter reasons ("host.down event"). */
  contract: string;
  decode?: (content: Buffer, message: ConsumeMessage) => unknown;
  schema?: z.ZodType<Payload>;
  handler: (payload: Payload, message: ConsumeMessage) => Promise<void>;
  /** Wait before requeueing after a transient failure, in milliseconds (default 1000). */
  retryDelayMilliseconds?: number;
  /** Consumer arguments (e.g. `x-priority`). */
  arguments?: Record<string, unknown>;
  /** Declares the queue (and its bindings) on the consumer's channel before consuming. */
  declare?: (channel: Channel) => Promise<void>;
}

/** Sends one message to the dead-letter exchange with its reason, then resolves (confirmed). */
export type DeadLetterSink = (message: ConsumeMessage, queue: string, reason: string) => Promise<void>;

const defaultDecode = (content: Buffer): unknown => {
  try {
    return JSON.parse(content.toString('utf8'));
  } catch (error) {
    throw new ContractViolationError('message body', `body is not JSON: ${(error as Error).message}`);
  }
};

/**
 * One consumer on its own channel. It survives channel-level errors (which do not trigger
 * connection recovery in amqplib) and broker-side cancels by reopening its channel and consuming
 * again; after a connection loss the client restarts it on the new connection.
 */
export class ManagedConsumer<Payload = unknown> {
  private channel: Channel | null = null;
  /** The acknowledgements of the current channel, sent together (AckBatch). */
  private acks: AckBatch | null = null;
  private model: ChannelModel | null = null;
  private stopped = false;
  private restartTimer: NodeJS.Timeout | null = null;
  private inFlight = 0;
  private idleWaiters: Array<() => void> = [];
  private consumerTag: string | null = null;

  /**
   * @param logger bound to the consumer's `queue` (AmqpClient.consume gives it a child logger): its
   *   lines do not name the queue again, which would put the key twice on one JSON line
   */
  constructor(
    readonly options: ConsumerOptions<Payload>,
    private readonly deadLetter: DeadLetterSink,
    private readonly logger: Logger,
    private readonly metrics: AmqpMetrics | null,
  ) {
    // Each outcome of this queue exported at 0 from start-up: the first dead letter is a rise that
    // LifeguardDeadLettersGrowing's increase() sees.
    if (metrics) exportAtZero(metrics.messages, 'outcome', MESSAGE_OUTCOMES, { queue: options.queue });
  }

  /** True once stop() was called. */
  get isStopped(): boolean {
    return this.stopped;
  }

  /** True while the consumer has a live channel and is consuming. */
  get isConsuming(): boolean {
    return this.channel !== null && this.consumerTag !== null;
  }

  /** Starts (or restarts) consuming on `model`. */
  async start(model: ChannelModel): Promise<void> {
    if (this.stopped) return;
    // A restart scheduled on an earlier connection is superseded by this start.
    if (this.restartTimer) {
      clearTimeout(this.restartTimer);
      this.restartTimer = null;
    }
    this.model = model;
    this.channel = null;
    this.consumerTag = null;
    const channel = await model.createChannel();
    const acks = new AckBatch(channel, this.logger);
    channel.on('error', (error: Error) => this.logger.warn({ err: error }, 'consumer channel error'));
    channel.on('close', () => {
      if (this.channel !== channel) return;
      this.channel = null;
      this.consumerTag = null;
      this.restartLater('channel closed');
    });
    if (this.options.declare) await this.options.declare(channel);
    await channel.prefetch(this.options.prefetch);
    this.channel = channel;
    this.acks = acks;
    const reply = await channel.consume(
      this.options.queue,
      (message) => {
        if (message === null) {
          this.logger.warn('consumer cancelled by the broker; consuming again');
          this.channel = null;
          this.consumerTag = null;
          acks.flush();
          void channel.close().catch(() => undefined);
          this.restartLater('cancelled by broker');
          return;
        }
        acks.delivered(message);
        void this.process(acks, message);
      },
      { noAck: false, ...(this.options.arguments ? { arguments: this.options.arguments } : {}) },
    );
    this.consumerTag = reply.consumerTag;
  }

  /**
   * Starts again in a second on the connection it last started on, unless a reconnect started it on
   * a newer one first (a closed channel, a broker cancel, a start that was cut off).
   */
  restartLater(why: string): void {
    if (this.stopped || this.restartTimer || !this.model) return;
    const model = this.model;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      // The client started this consumer on a newer connection meanwhile (a reconnect): restarting
      // on the old one would replace the live consumer with one that can never start.
      if (this.model !== model) return;
      this.start(model).catch((error: unknown) => {
        // A reconnect that started it on a newer connection meanwhile has the consumer now.
        if (this.model !== model) return;
        this.logger.warn({ err: error }, 'consumer restart failed; retrying');
        this.restartLater('restart failed');
      });
    }, 1000);
    this.logger.info({ why }, 'consumer will restart');
  }

  private async process(acks: AckBatch, message: ConsumeMessage): Promise<void> {
    const { queue, contract } = this.options;
    this.inFlight++;
    try {
      let payload: Payload;
      try {
        const decoded = (this.options.decode ?? defaultDecode)(message.content, message);
        payload = this.options.schema
          ? parseWith(this.options.schema, decoded, contract)
          : (decoded as Payload);
      } catch (error) {
        await this.reject(acks, message, error);
        return;
      }
      try {
        await this.options.handler(payload, message);
        acks.ack(message);
        this.metrics?.messages.inc({ queue, outcome: 'ack' });
      } catch (error) {
        if (error instanceof RejectedMessageError || error instanceof ContractViolationError) {
          await this.reject(acks, message, error);
          return;
        }
        this.logger.warn(
          { err: error, redelivered: message.fields.redelivered },
          'message handling failed; it will be redelivered',
        );
        await new Promise((resolve) => setTimeout(resolve, this.options.retryDelayMilliseconds ?? 1000));
        acks.settleNow(message, (channel) => channel.nack(message, false, true));
        this.metrics?.messages.inc({ queue, outcome: 'requeue' });
      }
    } catch (error) {
      // The channel died under us (ack/nack on a closed channel): the broker redelivers the message.
      this.logger.warn({ err: error }, 'could not settle message; the broker will redeliver it');
    } finally {
      this.inFlight--;
      if (this.inFlight === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  private async reject(acks: AckBatch, message: ConsumeMessage, error: unknown): Promise<void> {
    const reason = error instanceof Error ? error.message : String(error);
    this.logger.warn({ reason, routingKey: message.fields.routingKey }, 'message rejected and dead-lettered');
    try {
      await this.deadLetter(message, this.options.queue, reason);
    } catch (deadLetterError) {
      this.logger.error({ err: deadLetterError }, 'dead-lettering failed; requeueing');
      await new Promise((resolve) => setTimeout(resolve, 1000));
      acks.settleNow(message, (channel) => channel.nack(message, false, true));
      return;
    }
    acks.settleNow(message, (channel) => channel.ack(message));
    this.metrics?.messages.inc({ queue: this.options.queue, outcome: 'dead_letter' });
  }

  /** Stops consuming, waits up to `timeoutMilliseconds` for in-flight handlers, closes the channel. */
  async stop(timeoutMilliseconds = 10_000): Promise<void> {
    this.stopped = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const channel = this.channel;
    if (channel && this.consumerTag) await channel.cancel(this.consumerTag).catch(() => undefined);
    if (this.inFlight > 0) {
      await Promise.race([
        new Promise<void>((resolve) => this.idleWaiters.push(resolve)),
        new Promise((resolve) => setTimeout(resolve, timeoutMilliseconds)),
      ]);
    }
    this.channel = null;
    this.acks?.flush();
    if (channel) await channel.close().catch(() => undefined);
  }
}
