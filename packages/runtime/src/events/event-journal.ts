import {
  eventIncidentId,
  type LifeguardEvent,
  LifeguardEvent as LifeguardEventSchema,
} from '@lifeguard/contracts';
import type { RedisClient } from '../redis/redis-client.ts';
import { redisKey } from '../redis/redis-connection.ts';

/**
 * Event types the node monitor publishes again every poll cycle while their condition holds (a
 * re-enable candidate's `host.recovery.requested` until the host is re-enabled): an incident's
 * timeline keeps the first of each, the global stream every publication.
 */
export const EVENTS_REPEATED_EVERY_POLL_CYCLE: ReadonlySet<LifeguardEvent['type']> = new Set([
  'host.recovery.requested',
]);

/** How long, in seconds, an incident remembers that a repeated event type is in its timeline (30 days). */
const REPEATED_EVENT_MEMORY_SECONDS = 30 * 24 * 3600;

/**
 * The events of every incident, kept in Redis streams for operators (`lifeguard incident <id>`):
 * `<prefix>:incident:<id>:events` per incident (capped near 1,000 entries) and `<prefix>:events`
 * for all events (capped near 10,000).
 */
export class EventJournal {
  /** The stream of every event. */
  private readonly allEventsKey: string;

  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {
    this.allEventsKey = redisKey(keyPrefix, 'events');
  }

  /** The stream of one incident's events. */
  private incidentKey(incidentId: string): string {
    return redisKey(this.keyPrefix, 'incident', incidentId, 'events');
  }

  /**
   * Appends an event to the global stream and, when it belongs to one, to its incident's stream —
   * except a repeat (EVENTS_REPEATED_EVERY_POLL_CYCLE) of a type the incident's timeline already has.
   */
  async record(event: LifeguardEvent): Promise<void> {
    const body = JSON.stringify(event);
    const incidentId = eventIncidentId(event);
    const inTimeline = incidentId !== null && (await this.firstInIncident(event, incidentId));
    const pipeline = this.redis.multi();
    pipeline.xadd(this.allEventsKey, 'MAXLEN', '~', '10000', '*', 'event', body);
    if (inTimeline) pipeline.xadd(this.incidentKey(incidentId), 'MAXLEN', '~', '1000', '*', 'event', body);
    await pipeline.exec();
  }

  /** Whether the event belongs in its incident's timeline: not a repeat of a poll-cycle event already there. */
  private async firstInIncident(event: LifeguardEvent, incidentId: string): Promise<boolean> {
    if (!EVENTS_REPEATED_EVERY_POLL_CYCLE.has(event.type)) return true;
    const seen = redisKey(this.keyPrefix, 'incident', incidentId, 'journalled', event.type);
    return (await this.redis.set(seen, event.id, 'EX', REPEATED_EVENT_MEMORY_SECONDS, 'NX')) === 'OK';
  }

  /**
   * The events of an incident, oldest first, each id once: a transition's event published again after
   * a crash carries the id of the first publication (docs/design.md#event-ids), and only the first
   * entry is returned.
   */
  async incident(incidentId: string): Promise<LifeguardEvent[]> {
    const events = this.parse(await this.redis.xrange(this.incidentKey(incidentId), '-', '+', 'COUNT', 1000));
    const seen = new Set<string>();
    return events.filter((event) => !seen.has(event.id) && seen.add(event.id));
  }

  /** The `count` most recent events of all kinds, oldest first. */
  recent(count = 100): Promise<LifeguardEvent[]> {
    return this.recentMatching(count, () => true, count);
  }

  /**
   * The `limit` most recent events that `matches` accepts, oldest first: reads the global stream
   * newest-first in pages of `pageSize` entries until `limit` events matched or the stream ends, so a
   * rare event type is found however many events of other types came after it.
   */
  async recentMatching(
    limit: number,
    matches: (event: LifeguardEvent) => boolean,
    pageSize = 500,
  ): Promise<LifeguardEvent[]> {
    const found: LifeguardEvent[] = [];
    let end = '+';
    while (found.length < limit) {
      const entries = await this.redis.xrevrange(this.allEventsKey, end, '-', 'COUNT', pageSize);
      for (const event of this.parse(entries)) {
        if (found.length < limit && matches(event)) found.push(event);
      }
      const last = entries.at(-1);
      if (entries.length < pageSize || last === undefined) break;
      end = `(${last[0]}`;
    }
    return found.reverse();
  }

  /** The events of stream entries (field `event`, JSON), in their order; an entry that is no valid event is skipped. */
  private parse(entries: Array<[string, string[]]>): LifeguardEvent[] {
    const events: LifeguardEvent[] = [];
    for (const [, fields] of entries) {
      const body = fields[fields.indexOf('event') + 1];
      const parsed = body ? LifeguardEventSchema.safeParse(JSON.parse(body)) : null;
      if (parsed?.success) events.push(parsed.data);
    }
    return events;
  }
}
