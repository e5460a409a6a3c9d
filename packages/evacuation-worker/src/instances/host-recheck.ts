import type { EvacuateInstanceJobData } from '@lifeguard/contracts';
import {
  type IncidentStore,
  type InstanceHaConfig,
  type ReadGateSnapshot,
  readGateSnapshot,
} from '@lifeguard/instance-ha';
import type { ComputeApi } from '@lifeguard/openstack';
import type { Logger } from 'pino';
import { checkEvacuationSafety, type HeartbeatTimesSource } from '../host/safety-checks.ts';
import { sharedInFlight } from './shared-in-flight.ts';

/**
 * What a look at the world just before an evacuate request concluded: `go`; `refuse` — the host may
 * no longer be evacuated (its incident closed, no fence, its compute service back up): the instance
 * fails and a person decides; `defer` — not now (DISABLED, THRESHOLD exceeded): look again later.
 */
export type HostRecheck =
  | { kind: 'go' }
  | { kind: 'refuse'; reason: string }
  | { kind: 'defer'; reason: string };

/** The dependencies of the re-check: Nova, the incidents, InstanceHA's keys, the THRESHOLD switch, the heartbeats. */
export interface HostRecheckDependencies {
  readonly compute: ComputeApi;
  readonly incidents: IncidentStore;
  readonly config: Parameters<typeof checkEvacuationSafety>[2] & Pick<InstanceHaConfig, 'deltaSeconds'>;
  /** LIFEGUARD_EVACUATION_THRESHOLD_CHECK, as the host's first decision applies it. */
  readonly thresholdCheck: boolean;
  /** The node monitors' last heartbeats, with CHECK_HEARTBEAT (heartbeatTimesSource); else null. */
  readonly heartbeats: HeartbeatTimesSource;
  readonly logger: Logger;
  /**
   * The world's read for the gates (the compute services, the open incidents, ...): sharedWorldRead's,
   * which the re-checks of every host share while it is in flight; a fresh readGateSnapshot without it.
   */
  readonly readWorld?: () => Promise<ReadGateSnapshot>;
}

/**
 * The gates' read of the world (readGateSnapshot) shared by every re-check that asks while one is under
 * way, whatever its host: the compute services, the aggregates, the open incidents and the heartbeats
 * are the same for all hosts, and the hosts of one outage re-check at the same moments. Never a read
 * that had ended before the caller asked, never a failed one again (sharedInFlight).
 */
export function sharedWorldRead(
  deps: Pick<HostRecheckDependencies, 'compute' | 'incidents' | 'config' | 'heartbeats'>,
): () => Promise<ReadGateSnapshot> {
  const read = sharedInFlight(
    () =>
      readGateSnapshot({
        compute: deps.compute,
        incidents: deps.incidents,
        heartbeatTimes: deps.heartbeats,
        config: deps.config,
      }),
    () => 'world',
  );
  return () => read(undefined);
}

/**
 * Re-applies the gates of the host's first decision (checkEvacuationSafety: the incident open, of
 * this host, with its fence; the host down by its own reports and, with CHECK_HEARTBEAT, its
 * heartbeats; DISABLED; THRESHOLD) to the
 * world as it is now, for one instance's evacuate request: a retry, a job taken over after its lock
 * expired, or one resumed after a restart acts on no older decision than this.
 * @throws the Nova client's and Redis's errors (the caller reads again later)
 */
export async function recheckHost(
  deps: HostRecheckDependencies,
  data: Pick<EvacuateInstanceJobData, 'host' | 'incidentId'>,
): Promise<HostRecheck> {
  const incident = await deps.incidents.get(data.incidentId);
  if (incident === null) return { kind: 'refuse', reason: `incident ${data.incidentId} does not exist` };
  if (incident.fence === null) {
    return {
      kind: 'refuse',
      reason: `incident ${data.incidentId} has no fence record: the host was not fenced`,
    };
  }
  const verdict = await checkEvacuationSafety(
    deps.compute,
    deps.incidents,
    deps.config,
    deps.thresholdCheck,
    {
      host: data.host,
      serviceId: incident.serviceId,
      incidentId: data.incidentId,
      kdumpFenced: incident.kdumpFenced,
      resume: true,
      fencedAt: incident.fence.at,
    },
    deps.logger,
    deps.heartbeats,
    { incident, ...(deps.readWorld ? { readWorld: deps.readWorld } : {}) },
  );
  if (verdict.kind === 'proceed') return { kind: 'go' };
  return { kind: verdict.kind, reason: verdict.reason };
}

/**
 * Shares a host re-check among the instance jobs of one incident that ask while it is under way (the
 * instances of a host start together and each re-checks before its evacuate): one look at Nova and
 * Redis answers them all. Only a look still in flight is shared, so each caller's answer was read
 * after it asked or at most one round trip before; a finished look is never handed out again, and
 * the next caller starts a new one.
 */
export function sharedHostRecheck(
  recheck: (data: Pick<EvacuateInstanceJobData, 'host' | 'incidentId'>) => Promise<HostRecheck>,
): (data: Pick<EvacuateInstanceJobData, 'host' | 'incidentId'>) => Promise<HostRecheck> {
  return sharedInFlight(recheck, (data) => `${data.incidentId}\u0000${data.host}`);
}
