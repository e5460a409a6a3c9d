import { processingExpirySeconds } from '../../config/derived.ts';
import type { FreshFailure } from '../../services/categorise.ts';
import { suspectServices } from '../../services/suspect-services.ts';
import type { AdmissionCandidates, BlockedHosts } from './admission-decision.ts';
import type { AdmissionSnapshot } from './admission-snapshot.ts';
import { allServicesStale } from './all-services-stale-gate.ts';
import { deduplicate } from './deduplication-gate.ts';
import { type HeartbeatJudgement, judgeHeartbeats } from './heartbeat-cliff-gate.ts';

/**
 * Gates G0–G4 over one cycle: de-duplication against the open incidents, the heartbeat channel
 * (grace, cliff, alive hosts), the suspects and all-services-stale. Their fresh failures and resume
 * candidates are the hosts the monitor reads candidate facts for (`hostsToRead`).
 */
export function admissionCandidates(snapshot: AdmissionSnapshot): AdmissionCandidates {
  const { categorisation, config, now } = snapshot;
  const blocked: BlockedHosts[] = [];
  const deduplication = deduplicate({
    freshFailures: categorisation.freshFailures,
    resumeCandidates: categorisation.resumeCandidates,
    openIncidents: snapshot.openIncidents,
    now,
    processingExpirySeconds: processingExpirySeconds(config),
    leaderFencingToken: snapshot.fencingToken,
  });
  let fresh: ReadonlyArray<FreshFailure> = deduplication.fresh.map((candidate) => candidate.item);
  let heartbeat: HeartbeatJudgement<FreshFailure> | null = null;
  if (config.checkHeartbeat && snapshot.heartbeats !== null) {
    heartbeat = judgeHeartbeats(
      {
        candidates: fresh.map((failure) => ({ item: failure, shortHost: failure.service.shortHost })),
        inFlight: new Set(snapshot.openIncidents.keys()),
        lastHeartbeats: snapshot.heartbeats.last,
        listeningSince: snapshot.heartbeats.listeningSince,
        now,
      },
      {
        timeoutSeconds: config.heartbeatTimeoutSeconds,
        cliffThresholdPercent: config.heartbeatCliffThresholdPercent,
        cliffMaxCycles: config.heartbeatCliffMaxCycles,
      },
      snapshot.heartbeatCliff,
    );
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
    fresh = heartbeat.passed;
  }
  const suspects = suspectServices(
    categorisation.services,
    new Set(categorisation.freshFailures.map((failure) => failure.service.host)),
    config.thresholdSuspectAgeSeconds,
  );
  const stale = allServicesStale(categorisation.services, [
    ...fresh.map((failure) => failure.service.host),
    ...suspects,
  ]);
  if (stale.tripped) {
    blocked.push({
      gate: 'all-services-stale',
      hosts: [...stale.failedHosts],
      reason: `all ${stale.active} active compute services look failed (${fresh.length} past DELTA, ${stale.failed - fresh.length} silent past THRESHOLD_SUSPECT_AGE): Nova's data is suspect`,
    });
  }
  return {
    deduplication,
    heartbeat,
    suspects,
    allServicesStale: stale,
    fresh,
    resume: deduplication.resume,
    blocked,
    stoppedBy: stale.tripped ? 'all-services-stale' : null,
    judged: ['deduplication', 'heartbeat', 'all-services-stale'],
  };
}

/**
 * The hosts the monitor reads candidate facts for after G0–G4 (their servers, kdump clocks), and
 * whether the cycle needs them at all (the aggregates and schedulers are read for resumes too).
 */
export function hostsToRead(candidates: AdmissionCandidates): { hosts: string[]; needed: boolean } {
  const hosts = candidates.fresh.map((failure) => failure.service.host);
  return {
    hosts,
    needed: candidates.stoppedBy === null && hosts.length + candidates.resume.length > 0,
  };
}
