import { EventEmitter } from 'node:events';
import { EVENTS_EXCHANGE } from '@lifeguard/contracts';
import type { AmqpClient, Logger, ManagedConsumer } from '@lifeguard/runtime';
import { z } from 'zod';

/** What the console tells browsers about one event: enough to decide what to re-read. */
export const LiveEvent = z.object({
  id: z.string(),
  type: z.string(),
  occurredAt: z.string(),
  data: z.looseObject({ host: z.string().optional(), incidentId: z.string().nullable().optional() }),
});
export type LiveEvent = z.output<typeof LiveEvent>;

/** The summary a browser receives (no event data beyond the host and the incident). */
export interface LiveNotice {
  readonly type: string;
  readonly host: string | null;
  readonly incidentId: string | null;
  readonly occurredAt: string;
}

/**
 * Follows the events exchange (every routing key) on a queue of the console's own — exclusive,
 * deleted with its connection, re-declared by the consumer after a reconnect — and emits `notice`
 * for each event. A message that is not a lifeguard event is acknowledged and ignored (it is a copy:
 * the workers' own queues keep theirs).
 */
export class EventFeed extends EventEmitter<{ notice: [LiveNotice]; connected: [boolean] }> {
  private consumer: ManagedConsumer<LiveEvent> | null = null;
  private amqp: AmqpClient | null = null;

  constructor(
    private readonly queueName: string,
    private readonly logger: Logger,
  ) {
    super();
    this.setMaxListeners(0);
  }

  /** Starts consuming on `amqp`. @throws what AmqpClient.consume throws (the exchange cannot be bound) */
  async start(amqp: AmqpClient): Promise<void> {
    const queue = this.queueName;
    this.amqp = amqp;
    this.consumer = await amqp.consume<LiveEvent>({
      queue,
      prefetch: 100,
      contract: 'lifeguard event (console feed)',
      decode: (content) => {
        try {
          return JSON.parse(content.toString('utf8'));
        } catch {
          return null;
        }
      },
      declare: async (channel) => {
        await channel.assertExchange(EVENTS_EXCHANGE, 'topic', { durable: true });
        await channel.assertQueue(queue, { exclusive: true, autoDelete: true, durable: false });
        await channel.bindQueue(queue, EVENTS_EXCHANGE, '#');
      },
      handler: async (payload) => {
        const parsed = LiveEvent.safeParse(payload);
        if (!parsed.success) {
          this.logger.debug({ queue }, 'ignored a message that is not a lifeguard event');
          return;
        }
        const event = parsed.data;
        this.emit('notice', {
          type: event.type,
          host: event.data.host ?? null,
          incidentId: event.data.incidentId ?? null,
          occurredAt: event.occurredAt,
        });
      },
    });
    this.emit('connected', true);
  }

  /**
   * True while events arrive: consuming, on a live connection (false while RabbitMQ is down and
   * amqplib reconnects; the consumer comes back by itself on the new connection).
   */
  get running(): boolean {
    return (this.amqp?.isHealthy ?? false) && (this.consumer?.isConsuming ?? false);
  }

  async stop(): Promise<void> {
    await this.consumer?.stop();
    this.consumer = null;
  }
}
