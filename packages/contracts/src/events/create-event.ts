import { randomUUID } from 'node:crypto';
import { nameBasedUuid } from '../name-based-uuid.ts';
import { parseWith } from '../parse.ts';
import {
  EVENT_SCHEMA_VERSION,
  type EventData,
  type EventOf,
  type EventSource,
  LifeguardEvent,
  type LifeguardEventType,
} from './events.ts';

/** The namespace of lifeguard's name-based event ids (a fixed UUID, generated once for this purpose). */
const TRANSITION_ID_NAMESPACE = '5b0e2d8c-3f4a-4c1e-9b7d-6a2f1e8c4d30';

/**
 * The id of the event that announces one transition — `transitionEventId('host.fenced', incidentId)`,
 * `transitionEventId('instance.evacuated', incidentId, instanceId)` — the same for every publication
 * of that transition: a name-based UUID (RFC 9562 version 5) of the type and the parts. A worker that
 * publishes a transition and dies before it records that it did publishes it again after its restart
 * or takeover; with this id the second publication is the same event, which subscribers de-duplicate
 * on `messageId` (docs/design.md#event-ids).
 */
export function transitionEventId(type: LifeguardEventType, ...parts: ReadonlyArray<string>): string {
  return nameBasedUuid(TRANSITION_ID_NAMESPACE, JSON.stringify([type, ...parts]));
}

/**
 * Builds a validated event with the current schema version and `occurredAt` = now; its id is `id`
 * (a transition's, see transitionEventId) or a fresh random UUID.
 * @param occurredAt optional override (tests, replays); a Date or ISO string
 * @throws ContractViolationError when `data` does not satisfy the event's schema
 */
export function createEvent<Type extends LifeguardEventType>(
  type: Type,
  data: EventData<Type>,
  source: EventSource,
  occurredAt: Date | string = new Date(),
  id: string = randomUUID(),
): EventOf<Type> {
  const candidate = {
    id,
    schemaVersion: EVENT_SCHEMA_VERSION,
    occurredAt: typeof occurredAt === 'string' ? occurredAt : occurredAt.toISOString(),
    source,
    type,
    data,
  };
  return parseWith(LifeguardEvent, candidate, `${type} event`) as EventOf<Type>;
}
