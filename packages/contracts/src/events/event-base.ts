import { z } from 'zod';
import { Timestamp } from './identifiers.ts';

/** The schema version every event of this release carries. */
export const EVENT_SCHEMA_VERSION = 1;

/** Who published an event: the service name and the process instance (host:pid or pod name). */
export const EventSource = z.object({ service: z.string().min(1), instance: z.string().min(1) });
export type EventSource = z.infer<typeof EventSource>;

/** The fields every event carries besides its `type` and `data`. */
export const eventBase = {
  /** Unique per event (UUID); subscribers de-duplicate on it. */
  id: z.uuid(),
  schemaVersion: z.literal(EVENT_SCHEMA_VERSION),
  occurredAt: Timestamp,
  source: EventSource,
};
