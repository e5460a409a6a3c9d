import { IncidentStore } from '@lifeguard/instance-ha';
import { waitFor } from '@lifeguard/testing';
import type { SimulatedDeployment } from '../../e2e/support/simulated-deployment.ts';

/** What happened to one killed host, counted from the journal, the events and the cloud. */
export interface HostFigures {
  readonly host: string;
  /** Incidents opened for the host (Redis), expected 1. */
  readonly incidents: number;
  /** `host.fenced` events for the host, expected 1. */
  readonly fenced: number;
  /** `host.evacuated` events for the host, expected 1. */
  readonly evacuated: number;
  /** Evacuate calls beyond the first, summed over the host's evacuable servers (cloud-sim's count). */
  readonly extraEvacuateCalls: number;
  /** Evacuable servers of the host that were never evacuated. */
  readonly serversNotEvacuated: number;
}

/** The evacuable servers on `host` now (call before killing it). */
export function evacuableServers(deployment: SimulatedDeployment, host: string): string[] {
  return deployment.sim.model.servers
    .onHost(host)
    .filter((server) => deployment.evacuable(server))
    .map((server) => server.id);
}

/**
 * Waits (up to `timeoutMilliseconds`, without failing) for the host's `host.evacuated`, then counts
 * its figures: a lost incident shows as 0 fenced / 0 evacuated, a duplicate as 2.
 */
export async function hostFigures(
  deployment: SimulatedDeployment,
  host: string,
  servers: ReadonlyArray<string>,
  timeoutMilliseconds = 120_000,
): Promise<HostFigures> {
  await waitFor(
    `${host} evacuated`,
    () => deployment.timeline.ofType('host.evacuated').some((event) => event.data.host === host),
    timeoutMilliseconds,
    200,
  ).catch(() => undefined);
  const incidents = (await new IncidentStore(deployment.redis, deployment.keyPrefix).listRecent(1000)).filter(
    (incident) => incident.host === host,
  );
  const distinct = (type: 'host.fenced' | 'host.evacuated') =>
    new Set(
      deployment.timeline
        .ofType(type)
        .filter((event) => event.data.host === host)
        .map((event) => event.id),
    ).size;
  const calls = servers.map((id) => deployment.sim.evacuateCalls(id));
  return {
    host,
    incidents: incidents.length,
    fenced: distinct('host.fenced'),
    evacuated: distinct('host.evacuated'),
    extraEvacuateCalls: calls.reduce((sum, count) => sum + Math.max(0, count - 1), 0),
    serversNotEvacuated: calls.filter((count) => count === 0).length,
  };
}

/** Effects done twice: extra incidents, extra fences, extra evacuations, extra evacuate calls. */
export function duplicateEffects(figures: HostFigures): number {
  return (
    Math.max(0, figures.incidents - 1) +
    Math.max(0, figures.fenced - 1) +
    Math.max(0, figures.evacuated - 1) +
    figures.extraEvacuateCalls
  );
}

/** Work that never happened: no incident, no fence, no evacuation, servers never evacuated. */
export function lostEffects(figures: HostFigures): number {
  return (
    (figures.incidents === 0 ? 1 : 0) +
    (figures.fenced === 0 ? 1 : 0) +
    (figures.evacuated === 0 ? 1 : 0) +
    figures.serversNotEvacuated
  );
}
