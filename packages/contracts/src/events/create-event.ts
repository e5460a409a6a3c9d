import { createHash, randomUUID } from 'node:crypto';
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
const NAMESPACE_BYTES = Buffer.from(TRANSITION_ID_NAMESPACE.replaceAll('-', ''), 'hex');

/**
 * RFC 9562 version 5: the SHA-1 of the namespace's 16 bytes and the name's UTF-8, its first 16 bytes
 * with the version (5) and variant (10) bits set. The same ids as the `uuid` package's `v5`, made
 * with one hash call (this runs once or twice per agent request).
 */
function nameBasedUuid(name: string): string {
  const bytes = createHash('sha1').update(NAMESPACE_BYTES).update(name, 'utf8').digest();
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex', 0, 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/**
 * The id of the event that announces one transition — `transitionEventId('host.fenced', incidentId)`,
 * `transitionEventId('instance.evacuated', incidentId, instanceId)` — the same for every publication
 * of that transition: a name-based UUID (RFC 9562 version 5) of the type and the parts. A worker that
 * publishes a transition and dies before it records that it did publishes it again after its restart
 * or takeover; with this id the second publication is the same event, which subscribers de-duplicate
 * on `messageId` (docs/design.md#event-ids).
 */
export function transitionEventId(type: LifeguardEventType, ...parts: ReadonlyArray<string>): string {
  return nameBasedUuid(JSON.stringify([type, ...parts]));
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
