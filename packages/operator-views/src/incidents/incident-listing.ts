import type { Incident, IncidentStore } from '@lifeguard/instance-ha';

/**
 * The open incidents and the `recent` most recent ones (closed ones included), each once, newest
 * first: what `lifeguard incidents` and the console's incidents page list. With `recent` 0 only the
 * open ones.
 */
export async function listIncidents(incidents: IncidentStore, recent: number): Promise<Incident[]> {
  const [open, latest] = await Promise.all([
    incidents.listOpen(),
    recent > 0 ? incidents.listRecent(recent) : Promise.resolve([]),
  ]);
  const byId = new Map<string, Incident>();
  for (const incident of [...open, ...latest]) byId.set(incident.id, incident);
  return [...byId.values()].sort((a, b) => b.openedAt.localeCompare(a.openedAt));
}
