import assert from 'node:assert/strict';
import { EVENTS_EXCHANGE, type EventOf, LifeguardEvent, type LifeguardEventType } from '@lifeguard/contracts';
import { EVENTS_REPEATED_EVERY_POLL_CYCLE } from '@lifeguard/runtime';
import { waitFor } from '@lifeguard/testing';
import amqp, { type ChannelModel } from 'amqplib';

/** An event as a subscriber received it: the event, and when (milliseconds since the epoch) it arrived. */
export interface ReceivedEvent {
  readonly event: LifeguardEvent;
  readonly receivedAt: number;
}

/**
 * Every lifeguard event published on a vhost, as an operator's subscriber sees it: a private,
 * exclusive queue bound to the events exchange with `#`. Each message is validated against the
 * contracts' LifeguardEvent schema; one that is not valid fails the test that reads the timeline.
 */
export class EventTimeline {
  readonly received: ReceivedEvent[] = [];
  readonly invalid: string[] = [];

  private constructor(private readonly connection: ChannelModel) {}

  static async start(amqpUrl: string): Promise<EventTimeline> {
    const connection = await amqp.connect(amqpUrl);
    const timeline = new EventTimeline(connection);
    const channel = await connection.createChannel();
    await channel.assertExchange(EVENTS_EXCHANGE, 'topic', { durable: true });
    const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
    await channel.bindQueue(queue, EVENTS_EXCHANGE, '#');
    await channel.consume(
      queue,
      (message) => {
        if (!message) return;
        const text = message.content.toString('utf8');
        const parsed = LifeguardEvent.safeParse(JSON.parse(text));
        if (parsed.success) timeline.received.push({ event: parsed.data, receivedAt: Date.now() });
        else timeline.invalid.push(text);
      },
      { noAck: true },
    );
    return timeline;
  }

  /** Every event received, in arrival order. */
  get events(): LifeguardEvent[] {
    return this.received.map((each) => each.event);
  }

  ofType<Type extends LifeguardEventType>(type: Type): Array<EventOf<Type>> {
    return this.events.filter((event) => event.type === type) as Array<EventOf<Type>>;
  }

  /** The events whose `data.host` is `host`, in arrival order. */
  forHost(host: string): LifeguardEvent[] {
    return this.events.filter((event) => (event.data as { host?: string }).host === host);
  }

  /** The events of one incident, in arrival order. */
  forIncident(incidentId: string): LifeguardEvent[] {
    return this.events.filter((event) => (event.data as { incidentId?: string }).incidentId === incidentId);
  }

  /**
   * The events of one incident as its journal keeps them (EventJournal): every event, except that of
   * a type published again every poll cycle (EVENTS_REPEATED_EVERY_POLL_CYCLE) only the first.
   */
  forIncidentAsJournaled(incidentId: string): LifeguardEvent[] {
    const repeatedSeen = new Set<LifeguardEventType>();
    return this.forIncident(incidentId).filter((event) => {
      if (!EVENTS_REPEATED_EVERY_POLL_CYCLE.has(event.type)) return true;
      if (repeatedSeen.has(event.type)) return false;
      repeatedSeen.add(event.type);
      return true;
    });
  }

  /** Waits for the first event of `type` matching `predicate` and returns it. */
  async waitFor<Type extends LifeguardEventType>(
    type: Type,
    predicate: (event: EventOf<Type>) => boolean = () => true,
    timeoutMilliseconds = 60_000,
  ): Promise<EventOf<Type>> {
    try {
      return await waitFor(
        `a ${type} event`,
        () => {
          assert.deepEqual(this.invalid, [], 'every published event satisfies the contracts');
          return this.ofType(type).find(predicate);
        },
        timeoutMilliseconds,
        25,
      );
    } catch (error) {
      const seen = this.events.map((event) => `${event.type} ${JSON.stringify(event.data)}`);
      throw new Error(`${(error as Error).message}; received:\n${seen.join('\n') || '(nothing)'}`);
    }
  }

  /** When the event with this id arrived (milliseconds since the epoch). */
  receivedAt(event: LifeguardEvent): number {
    const found = this.received.find((each) => each.event.id === event.id);
    assert.ok(found, `event ${event.type} ${event.id} was received`);
    return found.receivedAt;
  }

  async close(): Promise<void> {
    await this.connection.close().catch(() => undefined);
  }
}

/**
 * Asserts that `events` hold the given types in this order (other types may come between), and that
 * their `occurredAt` never goes backwards along that order. Returns the matched events.
 */
export function assertSequence(events: ReadonlyArray<LifeguardEvent>, types: ReadonlyArray<string>) {
  const matched: LifeguardEvent[] = [];
  let from = 0;
  for (const type of types) {
    const index = events.findIndex((event, position) => position >= from && event.type === type);
    assert.ok(
      index >= 0,
      `expected ${type} after ${matched.map((each) => each.type).join(' → ') || 'the start'}; got ${events.map((each) => each.type).join(', ')}`,
    );
    matched.push(events[index]!);
    from = index + 1;
  }
  for (let index = 1; index < matched.length; index++) {
    assert.ok(
      Date.parse(matched[index]!.occurredAt) >= Date.parse(matched[index - 1]!.occurredAt),
      `${matched[index]!.type} (${matched[index]!.occurredAt}) did not occur before ${matched[index - 1]!.type} (${matched[index - 1]!.occurredAt})`,
    );
  }
  return matched;
}

/** One line per event, `+12.34 s host.fenced compute2`, its time relative to `origin` (milliseconds since the epoch). */
export function describeTimeline(events: ReadonlyArray<LifeguardEvent>, origin: number): string[] {
  return events.map((event) => {
    const seconds = (Date.parse(event.occurredAt) - origin) / 1000;
    const data = event.data as { host?: string; instanceId?: string };
    return `+${seconds.toFixed(2)} s ${event.type} ${data.host ?? ''}${data.instanceId ? ` ${data.instanceId}` : ''}`;
  });
}
