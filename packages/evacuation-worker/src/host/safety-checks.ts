import type { EvacuateHostJobData } from '@lifeguard/contracts';
import {
  hostsInEvacuableAggregates,
  type Incident,
  type IncidentStore,
  type InstanceHaConfig,
  shortHostname,
  type ThresholdResult,
  thresholdOfServiceListing,
} from '@lifeguard/instance-ha';
import type { ComputeApi, ComputeService } from '@lifeguard/openstack';
import type { Logger } from 'pino';
import { findComputeService } from './compute-service.ts';

/** What the safety checks concluded before a host's first evacuate. */
export type SafetyVerdict =
  | { kind: 'proceed'; incident: Incident; service: ComputeService }
  /** Never evacuate this job: a fence is missing or the host is not down. */
  | { kind: 'refuse'; reason: string }
  /** Not now (THRESHOLD exceeded, DISABLED): look again later. */
  | { kind: 'defer'; reason: string; threshold?: ThresholdResult };

/**
 * Defense in depth before anything is evacuated (DESIGN safety rules 1 and 2), in this order:
 * 1. the incident exists, is not closed, belongs to this host (short hostnames) and carries a fence
 *    record (power-off-confirmed, kdump or operator-confirmed) — else refuse;
 * 2. the compute service exists and is `forced_down` or `down` — else refuse (Nova would also answer
 *    400 "still in use", but lifeguard does not rely on it);
 * 3. DISABLED → defer;
 * 4. with `thresholdCheck`, the global THRESHOLD rule on a fresh service listing (limited to
 *    evacuable aggregates with TAGGED_AGGREGATES, every host when none is tagged or the list fails)
 *    → defer while exceeded (a partition or a mass outage: a person decides).
 */
export async function checkEvacuationSafety(
  compute: ComputeApi,
  incidents: IncidentStore,
  config: Pick<
    InstanceHaConfig,
    | 'disabled'
    | 'thresholdPercent'
    | 'taggedAggregates'
    | 'evacuableTag'
    | 'deltaSeconds'
    | 'thresholdSuspectAgeSeconds'
  >,
  thresholdCheck: boolean,
  data: EvacuateHostJobData,
  logger: Logger,
): Promise<SafetyVerdict> {
  let incident: Incident | null;
  try {
    incident = await incidents.get(data.incidentId);
  } catch (error) {
    return { kind: 'refuse', reason: `the incident record is unreadable: ${(error as Error).message}` };
  }
  if (incident === null) return { kind: 'refuse', reason: `incident ${data.incidentId} does not exist` };
  if (incident.state === 'closed') return { kind: 'refuse', reason: `incident ${data.incidentId} is closed` };
  if (shortHostname(incident.host) !== shortHostname(data.host)) {
    return {
      kind: 'refuse',
      reason: `incident ${data.incidentId} belongs to host ${incident.host}, not ${data.host}`,
    };
  }
  if (incident.fence === null) {
    return {
      kind: 'refuse',
      reason: `incident ${data.incidentId} has no fence record: the host was not fenced`,
    };
  }
  const service = await findComputeService(compute, data.host, data.serviceId);
  if (service === null) return { kind: 'refuse', reason: `Nova has no nova-compute service on ${data.host}` };
  if (service.forced_down !== true && service.state !== 'down') {
    return {
      kind: 'refuse',
      reason: `the compute service of ${data.host} is ${service.state ?? 'in an unknown state'} and not forced_down`,
    };
  }
  if (config.disabled) return { kind: 'defer', reason: 'DISABLED is true, not evacuating' };
  if (thresholdCheck) {
    const services = await compute.listServices({ binary: 'nova-compute' });
    let scope: Set<string> | null = null;
    if (config.taggedAggregates) {
      try {
        scope = hostsInEvacuableAggregates(await compute.listAggregates(), config.evacuableTag);
        // No tagged aggregate at all: count every host (the more cautious reading).
        if (scope.size === 0) scope = null;
      } catch (error) {
        logger.warn({ err: error }, 'aggregates could not be read; THRESHOLD counts every compute host');
      }
    }
    const situation = thresholdOfServiceListing(services, config, scope);
    if (situation.blocked) {
      return {
        kind: 'defer',
        reason: `${situation.impacted} of ${situation.total} compute hosts are down, forced down or silent (${situation.percent.toFixed(1)} % > THRESHOLD ${config.thresholdPercent} %)`,
        threshold: situation,
      };
    }
  }
  return { kind: 'proceed', incident, service };
}
