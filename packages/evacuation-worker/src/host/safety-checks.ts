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
import { pickComputeService } from './compute-service.ts';

/** What the safety checks concluded before a host's first evacuate. */
export type SafetyVerdict =
  | { kind: 'proceed'; incident: Incident; service: ComputeService }
  /** Never evacuate this job: a fence is missing or the host is not down. */
  | { kind: 'refuse'; reason: string }
  /** Not now (THRESHOLD exceeded, DISABLED): look again later. */
  | { kind: 'defer'; reason: string; threshold?: ThresholdResult };

/**
 * Defense in depth before anything is evacuated (docs/safety-rules.md rules 1 and 2), in this order:
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
  // One round of reads: the host's service (from the full listing when THRESHOLD needs it anyway)
  // and the aggregates that scope THRESHOLD.
  const [services, aggregates] = await Promise.all([
    thresholdCheck
      ? compute.listServices({ binary: 'nova-compute' })
      : compute.listServices({ binary: 'nova-compute', host: data.host }),
    thresholdCheck && config.taggedAggregates
      ? compute.listAggregates().catch((error: unknown) => error as Error)
      : null,
  ]);
  const service = pickComputeService(services, data.host, data.serviceId);
  if (service === null) return { kind: 'refuse', reason: `Nova has no nova-compute service on ${data.host}` };
  if (service.forced_down !== true && service.state !== 'down') {
    return {
      kind: 'refuse',
      reason: `the compute service of ${data.host} is ${service.state ?? 'in an unknown state'} and not forced_down`,
    };
  }
  if (config.disabled) return { kind: 'defer', reason: 'DISABLED is true, not evacuating' };
  if (thresholdCheck) {
    let scope: Set<string> | null = null;
    if (aggregates instanceof Error) {
      logger.warn({ err: aggregates }, 'aggregates could not be read; THRESHOLD counts every compute host');
    } else if (aggregates !== null) {
      scope = hostsInEvacuableAggregates(aggregates, config.evacuableTag);
      // No tagged aggregate at all: count every host (the more cautious reading).
      if (scope.size === 0) scope = null;
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
