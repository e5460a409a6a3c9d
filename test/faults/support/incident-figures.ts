import type { LifeguardEvent } from '@lifeguard/contracts';
import { EVENTS_REPEATED_EVERY_POLL_CYCLE, EventJournal } from '@lifeguard/runtime';
import { waitFor } from '@lifeguard/testing';
import type { EventTimeline } from '../../e2e/support/event-timeline.ts';
import type { RealNovaDeployment } from '../../e2e/support/real-nova-deployment.ts';

/** The events a handled host's incident publishes, in order (docs/end-to-end.md). */
export const INCIDENT_CHAIN = [
  'host.down',
  'host.fenced',
  'host.evacuation.started',
  'host.evacuated',
  'host.reenabled',
] as const;

/** Event types that act on a host: none may appear for a host lifeguard must leave alone. */
export const ACTING_TYPES: ReadonlySet<string> = new Set([
  'host.down',
  'host.fenced',
  'host.evacuation.started',
  'instance.evacuated',
  'host.evacuated',
  'host.reenabled',
]);

/**
 * Events of an incident that never arrived: each type of `expected` missing from the events exchange,
 * plus each published event missing from the incident journal in Redis (waited for up to 5 s: the
 * journal is written once the broker confirmed the event, a moment after a subscriber may see it). Of
 * the types published again every poll cycle (EVENTS_REPEATED_EVERY_POLL_CYCLE) the journal keeps
 * the first only, so for those a type published but absent from the journal counts once.
 */
export async function lostEvents(
  timeline: EventTimeline,
  journal: EventJournal,
  incidentId: string,
  expected: ReadonlyArray<string>,
): Promise<number> {
  const published = timeline.forIncident(incidentId);
  const missing = expected.filter((type) => !published.some((event) => event.type === type)).length;
  const journaled = await waitFor(
    `the journal of incident ${incidentId} to hold what was published`,
    async () => {
      const events = await journal.incident(incidentId);
      const types = new Set(events.map((event) => event.type));
      const ids = new Set(events.map((event) => event.id));
      const complete = published.every((event) =>
        EVENTS_REPEATED_EVERY_POLL_CYCLE.has(event.type) ? types.has(event.type) : ids.has(event.id),
      );
      return complete && events;
    },
    5_000,
  ).catch(() => journal.incident(incidentId));
  const journaledIds = new Set(journaled.map((event) => event.id));
  const journaledTypes = new Set(journaled.map((event) => event.type));
  const notJournaled = published.filter(
    (event) => !EVENTS_REPEATED_EVERY_POLL_CYCLE.has(event.type) && !journaledIds.has(event.id),
  ).length;
  const repeatedTypesMissing = [...EVENTS_REPEATED_EVERY_POLL_CYCLE].filter(
    (type) => published.some((event) => event.type === type) && !journaledTypes.has(type),
  ).length;
  return missing + notJournaled + repeatedTypesMissing;
}

/** The incident journal of a real-Nova deployment. */
export function journalOf(deployment: RealNovaDeployment): EventJournal {
  return new EventJournal(deployment.redis, deployment.keyPrefix);
}

/** Events published at or after `since` (milliseconds since the epoch) that act on a host other than `host`. */
export function actedOnOthers(timeline: EventTimeline, host: string, since: number): LifeguardEvent[] {
  return timeline.events.filter(
    (event) =>
      ACTING_TYPES.has(event.type) &&
      (event.data as { host?: string }).host !== host &&
      Date.parse(event.occurredAt) >= since,
  );
}

/**
 * Evacuations Nova recorded per server (real Nova's `os-migrations`, type evacuation, from `host`):
 * a server evacuated twice shows two records.
 */
export async function evacuationsPerServer(
  deployment: RealNovaDeployment,
  host: string,
  servers: ReadonlyArray<string>,
): Promise<Map<string, number>> {
  const answer = await deployment.nova.nova(
    'GET',
    `/os-migrations?migration_type=evacuation&source_compute=${host}`,
  );
  const migrations = answer.body.migrations as Array<{ instance_uuid: string }>;
  return new Map(
    servers.map((id) => [id, migrations.filter((migration) => migration.instance_uuid === id).length]),
  );
}
