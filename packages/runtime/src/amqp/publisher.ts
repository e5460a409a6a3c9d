import { randomUUID } from 'node:crypto';
import type { ConfirmChannel, Options } from 'amqplib';
import type { Logger } from 'pino';
import { PublishNotConfirmedError, UnroutableMessageError } from '../errors.ts';
import type { AmqpMetrics } from './amqp-metrics.ts';

/** Options of one confirmed publish; `mandatory` defaults to true. */
export type PublishOptions = Options.Publish;

/**
 * Publishes on one confirm channel and resolves only when RabbitMQ confirmed the message.
 * With `mandatory` (the default) a message no queue accepts is returned by the broker and the
 * publish rejects with UnroutableMessageError instead of vanishing. Returns are matched to publishes
 * by `messageId`, which is generated when the caller gives none.
 */
export class ConfirmedPublisher {
  private channel: ConfirmChannel | null = null;
  private opening: Promise<ConfirmChannel> | null = null;
  private readonly returned = new Set<string>();
  /** The broker's reason for the last channel closure (e.g. 404 NOT_FOUND - no exchange). */
  private lastChannelError: Error | null = null;

  constructor(
    private readonly openChannel: () => Promise<ConfirmChannel>,
    private readonly logger: Logger,
    private readonly metrics: AmqpMetrics | null,
  ) {}

  /** Drops the current channel (after a reconnect the next publish opens a new one). */
  reset(): void {
    this.channel = null;
    this.opening = null;
  }

  private async current(): Promise<ConfirmChannel> {
    if (this.channel) return this.channel;
    if (!this.opening) {
      this.opening = this.openChannel().then((channel) => {
        channel.on('return', (message) => {
          const id = message.properties.messageId as string | undefined;
          if (id) this.returned.add(id);
        });
        channel.on('error', (error: Error) => {
          this.lastChannelError = error;
          this.logger.warn({ err: error }, 'publisher channel error');
        });
        channel.on('close', () => {
          if (this.channel === channel) this.reset();
        });
        this.channel = channel;
        return channel;
      });
      this.opening.catch(() => this.reset());
    }
    return this.opening;
  }

  /**
   * Publishes `content` and waits for the broker's confirm.
   * @throws UnroutableMessageError when mandatory and no queue is bound for the routing key
   * @throws PublishNotConfirmedError when the broker nacks or the channel closes first
   */
  async publish(
    exchange: string,
    routingKey: string,
    content: Buffer,
    options: PublishOptions = {},
  ): Promise<void> {
    const channel = await this.current();
    const messageId = options.messageId ?? randomUUID();
    const started = process.hrtime.bigint();
    await new Promise<void>((resolve, reject) => {
      channel.publish(exchange, routingKey, content, { mandatory: true, ...options, messageId }, (error) => {
        if (error) reject(new PublishNotConfirmedError(exchange, routingKey, this.lastChannelError ?? error));
        else resolve();
      });
    }).catch((error: unknown) => {
      this.returned.delete(messageId);
      throw error;
    });
    this.metrics?.publishConfirmSeconds.observe(Number(process.hrtime.bigint() - started) / 1e9);
    if (this.returned.delete(messageId)) throw new UnroutableMessageError(exchange, routingKey);
  }

  /** Closes the channel (waiting for outstanding confirms first). */
  async close(): Promise<void> {
    const channel = this.channel;
    this.reset();
    if (!channel) return;
    try {
      await channel.waitForConfirms();
    } catch {
      // unconfirmed messages were already rejected to their publishers
    }
    await channel.close().catch(() => undefined);
  }
}
