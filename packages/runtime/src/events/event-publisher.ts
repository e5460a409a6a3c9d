import {
  createEvent,
  EVENTS_EXCHANGE,
  type EventData,
  type EventOf,
  type EventSource,
  eventRoutingKey,
  type LifeguardEvent,
  type LifeguardEventType,
} from '@lifeguard/contracts';
import type { Logger } from 'pino';
import type { AmqpClient } from '../amqp/amqp-client.ts';
import type { PublishOptions } from '../amqp/publisher.ts';
import { PublishNotConfirmedError } from '../errors.ts';
import type { EventJournal } from './event-journal.ts';

/**
 * The AMQP properties every lifeguard event is published with: persistent, `messageId` = event id
 * (subscribers de-duplicate on it), `type` = event type, JSON content type, `timestamp` in seconds
 * and the header `x-schema-version`. For publishers that hold an event already serialised (an
 * outbox relay), only these four fields are needed.
 */
export function eventMessageOptions(
  event: Pick<LifeguardEvent, 'id' | 'type' | 'occurredAt' | 'schemaVersion'>,
): PublishOptions {
  return {
    persistent: true,
    messageId: event.id,
    type: event.type,
    contentType: 'application/json',
    timestamp: Math.floor(Date.parse(event.occurredAt) / 1000),
    headers: { 'x-schema-version': event.schemaVersion },
  };
}

/** How one event is published. */
export interface EventPublishOptions {
  /** The event's id (a transition's, see transitionEventId in @lifeguard/contracts); default a random UUID. */
  readonly id?: string;
}

/**
 * Publishes lifeguard events to the events exchange with publisher confirms (persistent, `messageId`
 * = event id, `type` = event type, header `x-schema-version`), retrying a publish whose channel
 * closed before the confirm, then records the event in the Redis journal (incident timelines).
 */
export class EventPublisher {
  constructor(
    private readonly amqp: AmqpClient,
    private readonly source: EventSource,
    private readonly logger: Logger,
    private readonly journal: EventJournal | null = null,
  ) {}

  /**
   * Creates, publishes and journals an event. `options.id`: the id of the transition it announces
   * (transitionEventId), so that publishing it again after a crash repeats the same event; a fresh
   * random id otherwise.
   * @throws ContractViolationError when `data` breaks the event's schema
   * @throws UnroutableMessageError / PublishNotConfirmedError when RabbitMQ did not take it after 3 tries
   */
  async publish<Type extends LifeguardEventType>(
    type: Type,
    data: EventData<Type>,
    options: EventPublishOptions = {},
  ): Promise<EventOf<Type>> {
    const event = createEvent(type, data, this.source, new Date(), options.id);
    await this.publishEvent(event);
    return event;
  }

  /** Publishes an already built event (replays, relays); same guarantees as `publish`. */
  async publishEvent(event: LifeguardEvent): Promise<void> {
    const content = Buffer.from(JSON.stringify(event));
    for (let attempt = 1; ; attempt++) {
      try {
        await this.amqp.publish(EVENTS_EXCHANGE, eventRoutingKey(event), content, eventMessageOptions(event));
        break;
      } catch (error) {
        if (!(error instanceof PublishNotConfirmedError) || attempt >= 3) throw error;
        this.logger.warn({ err: error, eventId: event.id, attempt }, 'event publish not confirmed; retrying');
        await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      }
    }
    this.logger.info({ event: event.type, eventId: event.id, data: event.data }, `event ${event.type}`);
    if (this.journal) {
      await this.journal
        .record(event)
        .catch((error: unknown) =>
          this.logger.warn({ err: error, eventId: event.id }, 'event journal write failed'),
        );
    }
  }
}
