import type { LifeguardEvent } from '@lifeguard/contracts';
import type { Incident, IncidentStore } from '@lifeguard/instance-ha';
import type { EventJournal } from '@lifeguard/runtime';

/** One event of an incident's timeline, placed relative to the incident's opening. */
export interface TimelineEntry {
  /** Milliseconds since the incident opened (negative for events before, e.g. a late host.down). */
  readonly offsetMilliseconds: number;
  readonly event: LifeguardEvent;
}

/** Orders the events and places each relative to `openedAt`. */
export function timeline(incident: Incident, events: ReadonlyArray<LifeguardEvent>): TimelineEntry[] {
  const start = Date.parse(incident.openedAt);
  return [...events]
    .sort((a, b) => a.occurredAt.localeCompare(b.occurredAt))
    .map((event) => ({ offsetMilliseconds: Date.parse(event.occurredAt) - start, event }));
}

/** One incident and its journalled events in order (`lifeguard incident <id>`, the console's incident page). */
export interface IncidentTimeline {
  readonly incident: Incident;
  readonly timeline: TimelineEntry[];
}

/** Reads an incident and its timeline, or null when there is no such incident. */
export async function readIncidentTimeline(
  incidents: IncidentStore,
  journal: () => Promise<EventJournal>,
  incidentId: string,
): Promise<IncidentTimeline | null> {
  const incident = await incidents.get(incidentId);
  if (incident === null) return null;
  return { incident, timeline: timeline(incident, await (await journal()).incident(incidentId)) };
}
