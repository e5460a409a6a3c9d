import type { Incident } from '@lifeguard/instance-ha';
import { type IncidentTimeline, listIncidents, readIncidentTimeline } from '@lifeguard/operator-views';
import type { ConsoleConnections } from '../connections.ts';
import { type Seen, see } from './seen.ts';

/** Open incidents and the most recent closed ones, newest first, as `lifeguard incidents` lists them. */
export async function readIncidents(connections: ConsoleConnections): Promise<Seen<Incident[]>> {
  return see('Redis', connections.config.LIFEGUARD_CONSOLE_READ_TIMEOUT_SECONDS, async () =>
    listIncidents(await connections.incidents(), connections.config.LIFEGUARD_CONSOLE_RECENT_INCIDENTS),
  );
}

/** One incident and its journalled events in order, or null when there is no such incident. */
export async function readIncident(
  connections: ConsoleConnections,
  incidentId: string,
): Promise<Seen<IncidentTimeline | null>> {
  return see('Redis', connections.config.LIFEGUARD_CONSOLE_READ_TIMEOUT_SECONDS, async () =>
    readIncidentTimeline(await connections.incidents(), () => connections.journal(), incidentId),
  );
}
