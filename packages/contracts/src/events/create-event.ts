import { randomUUID } from 'node:crypto';
import { parseWith } from '../parse.ts';
import {
  EVENT_SCHEMA_VERSION,
  type EventData,
  type EventOf,
  type EventSource,
  LifeguardEvent,
  type LifeguardEventType,
} from './events.ts';

/**
 * Builds a validated event with a fresh id, the current schema version and `occurredAt` = now.
 * @param occurredAt optional override (tests, replays); a Date or ISO string
 * @throws ContractViolationError when `data` does not satisfy the event's schema
 */
export function createEvent<Type extends LifeguardEventType>(
  type: Type,
  data: EventData<Type>,
  source: EventSource,
  occurredAt: Date | string = new Date(),
): EventOf<Type> {
  const candidate = {
    id: randomUUID(),
    schemaVersion: EVENT_SCHEMA_VERSION,
    occurredAt: typeof occurredAt === 'string' ? occurredAt : occurredAt.toISOString(),
    source,
    type,
    data,
  };
  return parseWith(LifeguardEvent, candidate, `${type} event`) as EventOf<Type>;
}
