import type { AdmissionGate, EventData } from '@lifeguard/contracts';
import {
  type Categorisation,
  evaluateThreshold,
  type FreshFailure,
  hostsInEvacuableAggregates,
  type Incident,
  type InstanceHaConfig,
  impactedIncidentHosts,
  type KdumpStore,
  KdumpWait,
  processingExpirySeconds,
  type ServiceView,
  suspectServices,
  type ThresholdResult,
} from '@lifeguard/instance-ha';
import type { Aggregate, ComputeApi, ComputeService } from '@lifeguard/openstack';
import type { Logger } from '@lifeguard/runtime';
import type { EvacuabilityChecker, EvacuabilityResult } from '../evacuability.ts';
import { type AggregateLimitResult, evaluateAggregateLimits } from './aggregate-limit.ts';
import { type AllServicesStaleResult, allServicesStale } from './all-services-stale.ts';
import { type DeduplicationResult, deduplicate } from './deduplicate.ts';
import type { HeartbeatGate, HeartbeatGateResult } from './heartbeat-gate.ts';
import { applyRateLimit } from './rate-limit.ts';

/** A host admitted for fencing and evacuation this cycle. */
export interface AdmittedHost {
  readonly service: ServiceView;
  /** The open incident to reuse (a publish pending, or a resume), or null to open one. */
  readonly incident: Incident | null;
  readonly resume: boolean;
  readonly kdumpFenced: boolean;
}

export interface BlockedHosts {
  readonly gate: AdmissionGate;
  readonly hosts: ReadonlyArray<string>;
  readonly reason: string;
}

/** Everything the gate chain decided in one cycle (for events, logs and tests). */
export interface AdmissionDecision {
  readonly deduplication: DeduplicationResult;
  readonly heartbeat: HeartbeatGateResult<FreshFailure> | null;
  readonly allServicesStale: AllServicesStaleResult | null;
  readonly evacuability: EvacuabilityResult | null;
  readonly threshold: ThresholdResult | null;
  readonly aggregateLimits: AggregateLimitResult | null;
  readonly blocked: ReadonlyArray<BlockedHosts>;
  readonly thresholdExceeded: ReadonlyArray<EventData<'threshold.exceeded'>>;
  /** The gate that stopped the whole cycle, if any. */
  readonly stoppedBy: 'all-services-stale' | 'threshold' | 'disabled' | 'scheduler-down' | null;
  readonly admitted: ReadonlyArray<AdmittedHost>;
}

export interface AdmissionDependencies {
  readonly compute: ComputeApi;
  readonly evacuability: EvacuabilityChecker;
  readonly kdump: KdumpStore;
  readonly heartbeatGate: HeartbeatGate | null;
  /** Last heartbeat per short host and the listener's start, when CHECK_HEARTBEAT is on. */
  readonly heartbeats:
    | (() => Promise<{ last: ReadonlyMap<string, Date>; listeningSince: Date | null }>)
    | null;
  readonly config: InstanceHaConfig;
  readonly logger: Logger;
}

const hostsOf = (services: ReadonlyArray<ServiceView>) => services.map((service) => service.host);

/**
 * The admission gate chain of docs/instance-ha-rules.md#admission-gates, in InstanceHA's order: G0 de-duplication
 * (open incidents in Redis), G2/G3 heartbeat (grace, cliff, alive hosts), G4 all-services-stale, G5
 * evacuability, G6 THRESHOLD (strict `>`; blocks resume candidates too), G7 per-aggregate
 * `instanceha:max_failures` (resume candidates bypass it), G8 MAX_HOSTS_PER_CYCLE (resume candidates
 * not counted), DISABLED, G9 scheduler sanity, G10 kdump wait. Admitted: new failures first, then
 * kdump-fenced ones, then resumes (InstanceHA's submission order). It never fences nor evacuates.
 */
export async function admit(
  categorisation: Categorisation,
  openIncidents: ReadonlyMap<string, Incident>,
  now: Date,
  dependencies: AdmissionDependencies,
): Promise<AdmissionDecision> {
  const { config, logger, compute } = dependencies;
  const blocked: BlockedHosts[] = [];
  const thresholdExceeded: Array<EventData<'threshold.exceeded'>> = [];
  const result = (fields: Partial<AdmissionDecision>): AdmissionDecision => ({
    deduplication,
    heartbeat: null,
    allServicesStale: null,
    evacuability: null,
    threshold: null,
    aggregateLimits: null,
    blocked,
    thresholdExceeded,
    stoppedBy: null,
    admitted: [],
    ...fields,
  });

  // G0
  const deduplication = deduplicate({
    freshFailures: categorisation.freshFailures,
    resumeCandidates: categorisation.resumeCandidates,
    openIncidents,
    now,
    processingExpirySeconds: processingExpirySeconds(config),
  });
  if (deduplication.dropped.length > 0) {
    logger.info(
      { gate: 'deduplication', dropped: deduplication.dropped },
      `De-duplication: ${deduplication.dropped.length} host(s) already being handled`,
    );
  }
  const pending = new Map(
    deduplication.fresh.map((candidate) => [candidate.item.service.host, candidate.incident]),
  );
  let fresh: FreshFailure[] = deduplication.fresh.map((candidate) => candidate.item);
  const inFlight = new Set(openIncidents.keys());

  // G2/G3
  let heartbeat: HeartbeatGateResult<FreshFailure> | null = null;
  if (config.checkHeartbeat && dependencies.heartbeatGate && dependencies.heartbeats) {
    const { last, listeningSince } = await dependencies.heartbeats();
    heartbeat = dependencies.heartbeatGate.evaluate({
      candidates: fresh.map((failure) => ({ item: failure, shortHost: failure.service.shortHost })),
      inFlight,
      lastHeartbeats: last,
      listeningSince,
      now,
    });
    if (heartbeat.cliff && fresh.length > 0) {
      blocked.push({
        gate: 'heartbeat-cliff',
        hosts: fresh.map((failure) => failure.service.host),
        reason: `heartbeats fell from ${heartbeat.previousActive} to ${heartbeat.currentActive} active hosts: suspected observer partition`,
      });
    }
    if (heartbeat.alive.length > 0) {
      blocked.push({
        gate: 'host-reachable',
        hosts: heartbeat.alive.map((failure) => failure.service.host),
        reason: 'Nova says down but the host still sends heartbeats: only nova-compute died',
      });
    }
    fresh = [...heartbeat.passed];
  }
  if (deduplication.fresh.length > 0)
    logger.info(
      {
        gate: 'heartbeat',
        stale: deduplication.fresh.length,
        alive: heartbeat?.alive.length ?? 0,
        toFence: fresh.length,
        cliff: heartbeat?.cliff ?? false,
      },
      `Fencing decision: ${deduplication.fresh.length} stale, ${heartbeat?.alive.length ?? 0} heartbeat-alive, ${fresh.length} to fence, cliff=${heartbeat?.cliff ?? false}`,
    );

  // Silent hosts not failed yet: impacted in G4, G6 and G7, never admitted (see suspectServices).
  const suspects = suspectServices(
    categorisation.services,
    new Set(categorisation.freshFailures.map((failure) => failure.service.host)),
    config.thresholdSuspectAgeSeconds,
  );
  if (suspects.length > 0) {
    logger.info(
      { gate: 'suspects', suspects, suspectAgeSeconds: config.thresholdSuspectAgeSeconds },
      `Suspects: ${suspects.length} host(s) silent for more than ${config.thresholdSuspectAgeSeconds}s count as impacted`,
    );
  }

  // G4
  const stale = allServicesStale(categorisation.services, fresh.length + suspects.length);
  if (stale.tripped) {
    logger.error(
      { gate: 'all-services-stale', active: stale.active, failed: stale.failed },
      `CRITICAL: all ${stale.active} active compute services look failed; the data source is suspect, skipping this cycle`,
    );
    blocked.push({
      gate: 'all-services-stale',
      hosts: fresh.map((failure) => failure.service.host),
      reason: `${stale.failed} of ${stale.active} active compute services look failed`,
    });
    return result({ heartbeat, allServicesStale: stale, stoppedBy: 'all-services-stale' });
  }

  // The reads of the later gates (aggregates for G5/G7, the nova-scheduler services for G9) start
  // now, alongside G5's server queries, so that a failed host waits for one round of Nova requests
  // instead of one after the other. They only read; each gate still decides in its order.
  const candidates = fresh.length + deduplication.resume.length > 0;
  const aggregatesRead: Promise<Aggregate[] | null> =
    config.taggedAggregates && candidates
      ? compute.listAggregates().catch((error: unknown) => {
          logger.warn({ err: error }, 'aggregate list failed: no aggregate filtering this cycle (fail-open)');
          return null;
        })
      : Promise.resolve(null);
  const schedulersRead: Promise<ComputeService[] | Error> = candidates
    ? compute.listServices({ binary: 'nova-scheduler' }).catch((error: unknown) => error as Error)
    : Promise.resolve([]);

  // G5
  const evacuability = await dependencies.evacuability.filter(
    fresh.map((failure) => failure.service),
    aggregatesRead,
  );
  const aggregates = await aggregatesRead;
  if (evacuability.dropped.length > 0) {
    const reasons = [...new Set(evacuability.dropped.map((each) => each.reason))].join(', ');
    blocked.push({
      gate: 'not-evacuable',
      hosts: evacuability.dropped.map((each) => each.service.host),
      reason: reasons,
    });
    logger.info(
      {
        gate: 'evacuability',
        dropped: evacuability.dropped.map((each) => ({ host: each.service.host, reason: each.reason })),
      },
      `Evacuability: ${evacuability.dropped.length} host(s) dropped, ${evacuability.kept.length} kept`,
    );
  }
  let survivors: ServiceView[] = [...evacuability.kept];

  // G6
  let threshold: ThresholdResult | null = null;
  if (categorisation.services.length > 0 && survivors.length > 0) {
    threshold = evaluateThreshold({
      services: categorisation.services,
      survivors: hostsOf(survivors),
      suspects,
      thresholdPercent: config.thresholdPercent,
      evacuableAggregateHosts:
        config.taggedAggregates && aggregates !== null
          ? hostsInEvacuableAggregates(aggregates, config.evacuableTag)
          : null,
    });
    logger.info(
      { gate: 'threshold', ...threshold, impactedHosts: undefined, threshold: config.thresholdPercent },
      `Threshold: ${threshold.impacted}/${threshold.total} impacted = ${threshold.percent.toFixed(1)}% (THRESHOLD ${config.thresholdPercent}%): ${threshold.blocked ? 'blocked' : 'allowed'}`,
    );
    if (threshold.blocked) {
      thresholdExceeded.push({
        scope: 'global',
        aggregate: null,
        impacted: threshold.impacted,
        total: threshold.total,
        percent: threshold.percent,
        threshold: config.thresholdPercent,
        hosts: hostsOf(survivors),
      });
      return result({ heartbeat, allServicesStale: stale, evacuability, threshold, stoppedBy: 'threshold' });
    }
  }

  // G7
  let aggregateLimits: AggregateLimitResult | null = null;
  if (config.taggedAggregates && aggregates !== null && survivors.length > 0) {
    // Hosts being handled count while impacted, not while back up and reporting.
    const handled = impactedIncidentHosts({
      now,
      services: categorisation.services,
      openIncidents,
      heartbeats: null,
      aggregates,
      config,
    });
    aggregateLimits = evaluateAggregateLimits({
      failedHosts: hostsOf(survivors),
      suspectHosts: suspects,
      inFlightShortHosts: handled,
      aggregates,
      tag: config.evacuableTag,
    });
    for (const warning of aggregateLimits.warnings) {
      logger.warn(warning, 'invalid instanceha:max_failures on an aggregate; ignored');
    }
    for (const trip of aggregateLimits.trips) {
      thresholdExceeded.push({
        scope: 'aggregate',
        aggregate: trip.aggregate,
        impacted: trip.impacted,
        total: trip.total,
        percent: trip.total === 0 ? 0 : (trip.impacted / trip.total) * 100,
        threshold: trip.maxFailures,
        hosts: [...trip.hosts],
      });
      logger.warn(
        { gate: 'aggregate-threshold', ...trip },
        `Aggregate ${trip.aggregate}: ${trip.impacted} impacted > instanceha:max_failures ${trip.maxFailures}: blocked`,
      );
    }
    survivors = survivors.filter((service) => !aggregateLimits!.blocked.has(service.host));
  }

  // G8
  const { admitted: rateAdmitted, deferred } = applyRateLimit(survivors, config.maxHostsPerCycle);
  if (deferred.length > 0) {
    blocked.push({
      gate: 'rate-limit',
      hosts: hostsOf(deferred),
      reason: `MAX_HOSTS_PER_CYCLE ${config.maxHostsPerCycle}: ${deferred.length} host(s) deferred`,
    });
    logger.warn(
      { gate: 'rate-limit', deferred: hostsOf(deferred) },
      `Rate limit: ${deferred.length} host(s) deferred`,
    );
  }
  const decided = { heartbeat, allServicesStale: stale, evacuability, threshold, aggregateLimits };
  const resume = deduplication.resume;
  if (rateAdmitted.length + resume.length === 0) return result(decided);

  // DISABLED
  if (config.disabled) {
    logger.warn({ gate: 'disabled' }, 'lifeguard DISABLED is true, not evacuating');
    blocked.push({
      gate: 'disabled',
      hosts: [...hostsOf(rateAdmitted), ...resume.map((candidate) => candidate.item.host)],
      reason: 'DISABLED is true',
    });
    return result({ ...decided, stoppedBy: 'disabled' });
  }

  // G9
  const schedulers = await schedulersRead;
  if (schedulers instanceof Error) {
    logger.warn({ err: schedulers }, 'nova-scheduler check failed; proceeding');
  } else if (schedulers.length > 0 && !schedulers.some((scheduler) => scheduler.state === 'up')) {
    logger.warn(
      { gate: 'scheduler' },
      'no nova-scheduler is up: fencing now would only add downtime; skipping',
    );
    blocked.push({
      gate: 'scheduler-down',
      hosts: [...hostsOf(rateAdmitted), ...resume.map((candidate) => candidate.item.host)],
      reason: `none of ${schedulers.length} nova-scheduler services is up`,
    });
    return result({ ...decided, stoppedBy: 'scheduler-down' });
  }

  // G10
  const normal: AdmittedHost[] = [];
  const kdumpFenced: AdmittedHost[] = [];
  const waiting: string[] = [];
  const kdumpWait = new KdumpWait(dependencies.kdump, config.kdumpTimeoutSeconds);
  for (const service of rateAdmitted) {
    const incident = pending.get(service.host) ?? null;
    if (!config.checkKdump) {
      normal.push({ service, incident, resume: false, kdumpFenced: false });
      continue;
    }
    const { decision } = await kdumpWait.step(service.host, now);
    if (decision === 'start-wait' || decision === 'waiting') {
      waiting.push(service.host);
      continue;
    }
    if (decision === 'kdump-fenced')
      kdumpFenced.push({ service, incident, resume: false, kdumpFenced: true });
    else normal.push({ service, incident, resume: false, kdumpFenced: false });
  }
  if (waiting.length > 0) {
    blocked.push({
      gate: 'kdump-wait',
      hosts: waiting,
      reason: `waiting up to KDUMP_TIMEOUT ${config.kdumpTimeoutSeconds}s for fence_kdump`,
    });
  }
  const resumed: AdmittedHost[] = resume.map((candidate) => ({
    service: candidate.item,
    incident: candidate.incident,
    resume: true,
    kdumpFenced: candidate.item.marker.kdump,
  }));
  return result({ ...decided, admitted: [...normal, ...kdumpFenced, ...resumed] });
}
