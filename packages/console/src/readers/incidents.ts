import type { Incident } from '@lifeguard/instance-ha';
import {
  type FencingFacts,
  type IncidentTimeline,
  listIncidents,
  readFencingFacts,
  readIncidentTimeline,
} from '@lifeguard/operator-views';
import type { ConsoleConnections } from '../connections.ts';
import { type Seen, see } from './seen.ts';

/** Open incidents and the most recent closed ones, newest first, as `lifeguard incidents` lists them. */
export async function readIncidents(connections: ConsoleConnections): Promise<Seen<Incident[]>> {
  return see('Redis', connections.config.LIFEGUARD_CONSOLE_READ_TIMEOUT_SECONDS, async () =>
    listIncidents(await connections.incidents(), connections.config.LIFEGUARD_CONSOLE_RECENT_INCIDENTS),
  );
}

/** An incident's page: its record and timeline, and the facts behind the advice on a failing fence. */
export type IncidentPageView = IncidentTimeline & { readonly fencingFacts: FencingFacts };

/**
 * One incident and its journalled events in order, with its fence job and the host's own reports
 * when its fence is not proven yet; null when there is no such incident.
 * @param deltaSeconds DELTA, by which the host's reports are judged
 */
export async function readIncident(
  connections: ConsoleConnections,
  incidentId: string,
  deltaSeconds: number,
): Promise<Seen<IncidentPageView | null>> {
  return see('Redis', connections.config.LIFEGUARD_CONSOLE_READ_TIMEOUT_SECONDS, async () => {
    const found = await readIncidentTimeline(
      await connections.incidents(),
      () => connections.journal(),
      incidentId,
    );
    if (found === null) return null;
    const fencingFacts = await readFencingFacts(
      {
        redis: await connections.redis(),
        keyPrefix: connections.keyPrefix,
        compute: () => connections.openstack().compute,
      },
      { ...found.incident, fenced: found.incident.fence !== null },
      deltaSeconds,
    );
    return { ...found, fencingFacts };
  });
}
