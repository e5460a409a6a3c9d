import type { AdmissionDecision, CandidateFacts, InstanceHaConfig } from '@lifeguard/instance-ha';
import type { Logger } from '@lifeguard/runtime';

type Settings = Pick<
  InstanceHaConfig,
  'thresholdSuspectAgeSeconds' | 'thresholdPercent' | 'checkHeartbeat' | 'kdumpTimeoutSeconds'
>;

/** Logs what G0–G4 decided: de-duplication, the heartbeat channel, the suspects, all-services-stale. */
function logEarlyGates(decision: AdmissionDecision, config: Settings, logger: Logger): void {
  const { deduplication, heartbeat } = decision;
  if (deduplication.dropped.length > 0) {
    logger.info(
      { gate: 'deduplication', dropped: deduplication.dropped },
      `De-duplication: ${deduplication.dropped.length} host(s) already being handled`,
    );
  }
  const stale = deduplication.fresh.length;
  if (stale > 0) {
    const alive = heartbeat?.alive.length ?? 0;
    const toFence = heartbeat ? heartbeat.passed.length : stale;
    const cliff = heartbeat?.cliff ?? false;
    logger.info(
      { gate: 'heartbeat', stale, alive, toFence, cliff },
      // InstanceHA's greppable line; its "to fence" are candidates: THRESHOLD and the later gates decide.
      `Fencing decision: ${stale} stale, ${alive} heartbeat-alive, ${toFence} to fence, cliff=${cliff} (candidates: THRESHOLD and the later gates decide)`,
    );
  }
  if (decision.suspects.length > 0) {
    logger.info(
      {
        gate: 'suspects',
        suspects: decision.suspects,
        suspectAgeSeconds: config.thresholdSuspectAgeSeconds,
      },
      `Suspects: ${decision.suspects.length} host(s) silent for more than ${config.thresholdSuspectAgeSeconds}s count as impacted`,
    );
  }
  const allStale = decision.allServicesStale;
  if (allStale?.tripped) {
    logger.error(
      { gate: 'all-services-stale', active: allStale.active, failed: allStale.failed },
      `CRITICAL: all ${allStale.active} active compute services look failed; the data source is suspect, skipping this cycle`,
    );
  }
}

/** Logs what G5–G9 decided. */
function logLaterGates(decision: AdmissionDecision, config: Settings, logger: Logger): void {
  const evacuability = decision.evacuability;
  if (evacuability && evacuability.dropped.length > 0) {
    logger.info(
      {
        gate: 'evacuability',
        dropped: evacuability.dropped.map((each) => ({ host: each.service.host, reason: each.reason })),
      },
      `Evacuability: ${evacuability.dropped.length} host(s) dropped, ${evacuability.kept.length} kept`,
    );
  }
  const threshold = decision.threshold;
  if (threshold) {
    const judgement = decision.thresholdJudgement;
    logger.info(
      {
        gate: 'threshold',
        ...threshold,
        impactedHosts: undefined,
        threshold: config.thresholdPercent,
        verdict: judgement?.verdict,
        reason: judgement?.reason,
      },
      `Threshold: ${threshold.impacted}/${threshold.total} impacted = ${threshold.percent.toFixed(1)}% (THRESHOLD ${config.thresholdPercent}%): ${threshold.blocked ? 'blocked' : 'allowed'}`,
    );
  }
  for (const warning of decision.aggregateLimits?.warnings ?? []) {
    logger.warn(warning, 'invalid instanceha:max_failures on an aggregate; ignored');
  }
  for (const trip of decision.aggregateLimits?.trips ?? []) {
    logger.warn(
      { gate: 'aggregate-threshold', ...trip },
      `Aggregate ${trip.aggregate}: ${trip.impacted} impacted > instanceha:max_failures ${trip.maxFailures}: blocked`,
    );
  }
  if (decision.rateLimited.length > 0) {
    logger.warn(
      { gate: 'rate-limit', deferred: decision.rateLimited },
      `Rate limit: ${decision.rateLimited.length} host(s) deferred`,
    );
  }
  if (decision.stoppedBy === 'disabled') {
    logger.warn({ gate: 'disabled' }, 'lifeguard DISABLED is true, not evacuating');
  }
  if (decision.scheduler?.readError) {
    logger.warn({ err: decision.scheduler.readError }, 'nova-scheduler check failed; proceeding');
  }
  if (decision.stoppedBy === 'scheduler-down') {
    logger.warn(
      { gate: 'scheduler' },
      'no nova-scheduler is up: fencing now would only add downtime; skipping',
    );
  }
}

/** Logs what each admission gate decided in one cycle, gate by gate, in their order. */
export function logAdmission(
  decision: AdmissionDecision,
  facts: CandidateFacts | null,
  config: Settings,
  logger: Logger,
): void {
  logEarlyGates(decision, config, logger);
  logLaterGates(decision, config, logger);
  for (const update of decision.kdumpClockUpdates) {
    const clock = facts?.kdumpClocks.get(update.host);
    logger.info(
      { gate: 'kdump-wait', host: update.host, change: update.change, stale: update.stale?.toISOString() },
      update.change === 'start'
        ? `kdump: waiting up to KDUMP_TIMEOUT ${config.kdumpTimeoutSeconds}s for fence_kdump from ${update.host}`
        : `kdump: fence_kdump from ${update.host} at ${clock?.lastPacketAt?.toISOString()}: its wait clock is settled`,
    );
  }
}
