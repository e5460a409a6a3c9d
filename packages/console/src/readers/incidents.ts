import { type TimelineEntry, timeline } from '@lifeguard/cli';
import type { Incident } from '@lifeguard/instance-ha';
import type { ConsoleConnections } from '../connections.ts';
import { type Seen, see } from './seen.ts';

/** Open incidents and the most recent closed ones, newest first, as `lifeguard incidents` lists them. */
export async function readIncidents(connections: ConsoleConnections): Promise<Seen<Incident[]>> {
  return see('Redis', connections.config.LIFEGUARD_CONSOLE_READ_TIMEOUT_SECONDS, async () => {
    const store = await connections.incidents();
    const [open, recent] = await Promise.all([
      store.listOpen(),
      store.listRecent(connections.config.LIFEGUARD_CONSOLE_RECENT_INCIDENTS),
    ]);
    const byId = new Map<string, Incident>();
    for (const incident of [...open, ...recent]) byId.set(incident.id, incident);
    return [...byId.values()].sort((a, b) => b.openedAt.localeCompare(a.openedAt));
  });
}

/** One incident and its journalled events in order, or null when there is no such incident. */
export async function readIncident(
  connections: ConsoleConnections,
  incidentId: string,
): Promise<Seen<{ incident: Incident; entries: TimelineEntry[] } | null>> {
  return see('Redis', connections.config.LIFEGUARD_CONSOLE_READ_TIMEOUT_SECONDS, async () => {
    const incident = await (await connections.incidents()).get(incidentId);
    if (incident === null) return null;
    return {
      incident,
      entries: timeline(incident, await (await connections.journal()).incident(incidentId)),
    };
  });
}
