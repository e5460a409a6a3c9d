import {
  eventIncidentId,
  type LifeguardEvent,
  LifeguardEvent as LifeguardEventSchema,
} from '@lifeguard/contracts';
import type { Redis } from 'ioredis';
import { redisKey } from '../redis/redis-connection.ts';

/**
 * The events of every incident, kept in Redis streams for operators (`lifeguard incident <id>`):
 * `<prefix>:incident:<id>:events` per incident (capped near 1,000 entries) and `<prefix>:events`
 * for all events (capped near 10,000).
 */
export class EventJournal {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
  ) {}

  private incidentKey(incidentId: string): string {
    return redisKey(this.keyPrefix, 'incident', incidentId, 'events');
  }

  /** Appends an event to the global stream and, when it belongs to one, to its incident's stream. */
  async record(event: LifeguardEvent): Promise<void> {
    const body = JSON.stringify(event);
    const pipeline = this.redis.multi();
    pipeline.xadd(redisKey(this.keyPrefix, 'events'), 'MAXLEN', '~', '10000', '*', 'event', body);
    const incidentId = eventIncidentId(event);
    if (incidentId) pipeline.xadd(this.incidentKey(incidentId), 'MAXLEN', '~', '1000', '*', 'event', body);
    await pipeline.exec();
  }

  /** The events of an incident, oldest first. */
  async incident(incidentId: string): Promise<LifeguardEvent[]> {
    return this.parse(await this.redis.xrange(this.incidentKey(incidentId), '-', '+', 'COUNT', 1000));
  }

  /** The most recent events of all kinds, oldest first. */
  async recent(count = 100): Promise<LifeguardEvent[]> {
    const entries = await this.redis.xrevrange(redisKey(this.keyPrefix, 'events'), '+', '-', 'COUNT', count);
    return this.parse(entries.reverse());
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
    const key = redisKey(this.keyPrefix, 'events');
    const found: LifeguardEvent[] = [];
    let end = '+';
    while (found.length < limit) {
      const entries = await this.redis.xrevrange(key, end, '-', 'COUNT', pageSize);
      for (const event of this.parse(entries)) {
        if (found.length < limit && matches(event)) found.push(event);
      }
      const last = entries.at(-1);
      if (entries.length < pageSize || last === undefined) break;
      end = `(${last[0]}`;
    }
    return found.reverse();
  }

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
