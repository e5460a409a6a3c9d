import { processingExpirySeconds, suspectServices } from '@lifeguard/instance-ha';
import { type AdmissionRun, CONTINUE, type CycleGate, stop } from './admission-run.ts';
import { allServicesStale } from './all-services-stale.ts';
import { deduplicate } from './deduplicate.ts';

/** G0 de-duplication (docs/instance-ha-rules.md#admission-gates): hosts with an open incident are being handled. */
export const deduplicationGate: CycleGate = {
  name: 'deduplication',
  run(run) {
    const { config, logger } = run.dependencies;
    const deduplication = deduplicate({
      freshFailures: run.categorisation.freshFailures,
      resumeCandidates: run.categorisation.resumeCandidates,
      openIncidents: run.openIncidents,
      now: run.now,
      processingExpirySeconds: processingExpirySeconds(config),
      leaderFencingToken: run.dependencies.fencingToken ?? null,
    });
    if (deduplication.dropped.length > 0) {
      logger.info(
        { gate: 'deduplication', dropped: deduplication.dropped },
        `De-duplication: ${deduplication.dropped.length} host(s) already being handled`,
      );
    }
    run.decision.deduplication = deduplication;
    run.pending = new Map(
      deduplication.fresh.map((candidate) => [candidate.item.service.host, candidate.incident]),
    );
    run.fresh = deduplication.fresh.map((candidate) => candidate.item);
    run.resume = deduplication.resume;
    return CONTINUE;
  },
};

/** G2/G3 heartbeat (grace, cliff, alive hosts), with CHECK_HEARTBEAT. */
export const heartbeatCycleGate: CycleGate = {
  name: 'heartbeat',
  async run(run) {
    const { config, logger, heartbeatGate, heartbeats } = run.dependencies;
    const stale = run.fresh.length;
    if (config.checkHeartbeat && heartbeatGate && heartbeats) {
      const { last, listeningSince } = await heartbeats();
      const heartbeat = heartbeatGate.evaluate({
        candidates: run.fresh.map((failure) => ({ item: failure, shortHost: failure.service.shortHost })),
        inFlight: new Set(run.openIncidents.keys()),
        lastHeartbeats: last,
        listeningSince,
        now: run.now,
      });
      if (heartbeat.cliff && run.fresh.length > 0) {
        run.decision.blocked.push({
          gate: 'heartbeat-cliff',
          hosts: run.fresh.map((failure) => failure.service.host),
          reason: `heartbeats fell from ${heartbeat.previousActive} to ${heartbeat.currentActive} active hosts: suspected observer partition`,
        });
      }
      if (heartbeat.alive.length > 0) {
        run.decision.blocked.push({
          gate: 'host-reachable',
          hosts: heartbeat.alive.map((failure) => failure.service.host),
          reason: 'Nova says down but the host still sends heartbeats: only nova-compute died',
        });
      }
      run.decision.heartbeat = heartbeat;
      run.fresh = [...heartbeat.passed];
    }
    const heartbeat = run.decision.heartbeat;
    if (stale > 0)
      logger.info(
        {
          gate: 'heartbeat',
          stale,
          alive: heartbeat?.alive.length ?? 0,
          toFence: run.fresh.length,
          cliff: heartbeat?.cliff ?? false,
        },
        `Fencing decision: ${stale} stale, ${heartbeat?.alive.length ?? 0} heartbeat-alive, ${run.fresh.length} to fence, cliff=${heartbeat?.cliff ?? false}`,
      );
    return CONTINUE;
  },
};

/** Suspects (silent hosts not failed yet, impacted in G4, G6 and G7) and G4 all-services-stale. */
export const allServicesStaleGate: CycleGate = {
  name: 'all-services-stale',
  run(run) {
    const { config, logger } = run.dependencies;
    run.suspects = suspectServices(
      run.categorisation.services,
      new Set(run.categorisation.freshFailures.map((failure) => failure.service.host)),
      config.thresholdSuspectAgeSeconds,
    );
    if (run.suspects.length > 0) {
      logger.info(
        { gate: 'suspects', suspects: run.suspects, suspectAgeSeconds: config.thresholdSuspectAgeSeconds },
        `Suspects: ${run.suspects.length} host(s) silent for more than ${config.thresholdSuspectAgeSeconds}s count as impacted`,
      );
    }
    const stale = allServicesStale(run.categorisation.services, run.fresh.length + run.suspects.length);
    run.decision.allServicesStale = stale;
    if (!stale.tripped) return CONTINUE;
    logger.error(
      { gate: 'all-services-stale', active: stale.active, failed: stale.failed },
      `CRITICAL: all ${stale.active} active compute services look failed; the data source is suspect, skipping this cycle`,
    );
    run.decision.blocked.push({
      gate: 'all-services-stale',
      hosts: run.fresh.map((failure) => failure.service.host),
      reason: `${stale.failed} of ${stale.active} active compute services look failed`,
    });
    return stop('all-services-stale');
  },
};

/**
 * Starts the reads of the later gates (aggregates for G5/G7, the nova-scheduler services for G9)
 * alongside G5's server queries, so that a failed host waits for one round of Nova requests instead
 * of one after the other. They only read; each gate still decides in its order.
 */
export function startLaterReads(run: AdmissionRun): void {
  const { config, logger, compute } = run.dependencies;
  const candidates = run.fresh.length + run.resume.length > 0;
  run.aggregatesRead =
    config.taggedAggregates && candidates
      ? compute.listAggregates().catch((error: unknown) => {
          logger.warn({ err: error }, 'aggregate list failed: no aggregate filtering this cycle (fail-open)');
          return null;
        })
      : Promise.resolve(null);
  run.schedulersRead = candidates
    ? compute.listServices({ binary: 'nova-scheduler' }).catch((error: unknown) => error as Error)
    : Promise.resolve([]);
}

/** G5 evacuability (docs/instance-ha-rules.md#evacuable-tags): hosts with nothing to evacuate are dropped. */
export const evacuabilityGate: CycleGate = {
  name: 'evacuability',
  async run(run) {
    const { logger } = run.dependencies;
    startLaterReads(run);
    const evacuability = await run.dependencies.evacuability.filter(
      run.fresh.map((failure) => failure.service),
      run.aggregatesRead,
    );
    run.aggregates = await run.aggregatesRead;
    run.decision.evacuability = evacuability;
    if (evacuability.dropped.length > 0) {
      const reasons = [...new Set(evacuability.dropped.map((each) => each.reason))].join(', ');
      run.decision.blocked.push({
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
    run.survivors = [...evacuability.kept];
    return CONTINUE;
  },
};
