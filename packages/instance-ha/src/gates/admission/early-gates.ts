import { processingExpirySeconds } from '../../config/derived.ts';
import { hostAgentCliff } from '../../host-agents/host-agent-failures.ts';
import { type HostAgentSilence, judgeHostAgentSilence } from '../../host-agents/host-agent-silence.ts';
import type { FreshFailure } from '../../services/categorise.ts';
import { suspectServices } from '../../services/suspect-services.ts';
import type { AdmissionCandidates, BlockedHosts } from './admission-decision.ts';
import type { AdmissionSnapshot } from './admission-snapshot.ts';
import { allServicesStale } from './all-services-stale-gate.ts';
import { deduplicate } from './deduplication-gate.ts';
import { type HeartbeatJudgement, judgeHeartbeats } from './heartbeat-cliff-gate.ts';

/**
 * With HEARTBEAT_DETECTION, the candidates whose host has a lifeguard host agent, each with what the
 * silence rule says of it (judgeHostAgentSilence); and, when most agents fell quiet at once
 * (hostAgentCliff), the block that holds them all.
 */
function judgeByHostAgents(
  snapshot: AdmissionSnapshot,
  candidates: ReadonlyArray<FreshFailure>,
): { byAgent: Map<FreshFailure, HostAgentSilence>; cliff: BlockedHosts | null } {
  const { config, now } = snapshot;
  const heartbeats = snapshot.heartbeats;
  const agents = config.heartbeatDetection ? (heartbeats?.hostAgents ?? null) : null;
  const byAgent = new Map<FreshFailure, HostAgentSilence>();
  if (agents === null || heartbeats === null) return { byAgent, cliff: null };
  const settings = {
    downAfterSeconds: config.heartbeatDownAfterSeconds,
    novaReportIntervalSeconds: config.novaReportIntervalSeconds,
  };
  for (const failure of candidates) {
    const { service } = failure;
    const input = { shortHost: service.shortHost, evidence: agents, service, now };
    const silence = judgeHostAgentSilence({ ...input, listeningSince: heartbeats.listeningSince }, settings);
    if (silence.kind !== 'no-agent') byAgent.set(failure, silence);
  }
  const cliff = hostAgentCliff(agents, new Set(snapshot.openIncidents.keys()), now, {
    downAfterSeconds: config.heartbeatDownAfterSeconds,
    heartbeatTimeoutSeconds: config.heartbeatTimeoutSeconds,
    cliffThresholdPercent: config.heartbeatCliffThresholdPercent,
  });
  if (!cliff.tripped || byAgent.size === 0) return { byAgent, cliff: null };
  const hosts = [...byAgent.keys()].map((failure) => failure.service.host);
  return { byAgent, cliff: { gate: 'heartbeat-cliff', hosts, reason: cliff.reason } };
}

/**
 * G2/G3 on the cycle's candidates: InstanceHA's heartbeat gate (judgeHeartbeats, HEARTBEAT_TIMEOUT)
 * for hosts without a lifeguard host agent; with HEARTBEAT_DETECTION a host whose agent was ever heard
 * is judged by its agent instead (judgeByHostAgents): heard on any network within
 * HEARTBEAT_DOWN_AFTER, it runs; otherwise it goes on, unless most agents fell quiet at once: then
 * every candidate with an agent is held. A cliff of InstanceHA's channel holds every candidate.
 */
function judgeHeartbeatChannels(
  snapshot: AdmissionSnapshot,
  candidates: ReadonlyArray<FreshFailure>,
): { heartbeat: HeartbeatJudgement<FreshFailure>; blocked: BlockedHosts[]; passed: FreshFailure[] } {
  const { config, now } = snapshot;
  const { byAgent, cliff: agentCliff } = judgeByHostAgents(snapshot, candidates);
  const heartbeat = judgeHeartbeats(
    {
      candidates: candidates
        .filter((failure) => !byAgent.has(failure))
        .map((failure) => ({ item: failure, shortHost: failure.service.shortHost })),
      inFlight: new Set(snapshot.openIncidents.keys()),
      lastHeartbeats: snapshot.heartbeats?.last ?? new Map(),
      listeningSince: snapshot.heartbeats?.listeningSince ?? null,
      now,
    },
    {
      timeoutSeconds: config.heartbeatTimeoutSeconds,
      cliffThresholdPercent: config.heartbeatCliffThresholdPercent,
      cliffMaxCycles: config.heartbeatCliffMaxCycles,
    },
    snapshot.heartbeatCliff,
  );
  const blocked: BlockedHosts[] = [];
  if (heartbeat.cliff && candidates.length > 0) {
    blocked.push({
      gate: 'heartbeat-cliff',
      hosts: candidates.map((failure) => failure.service.host),
      reason: `heartbeats fell from ${heartbeat.previousActive} to ${heartbeat.currentActive} active hosts: suspected observer partition`,
    });
    return { heartbeat, blocked, passed: [] };
  }
  if (heartbeat.alive.length > 0) {
    blocked.push({
      gate: 'host-reachable',
      hosts: heartbeat.alive.map((failure) => failure.service.host),
      reason: `Nova says down but a heartbeat came within HEARTBEAT_TIMEOUT (${config.heartbeatTimeoutSeconds} s): the host may still run; not fenced before HEARTBEAT_TIMEOUT of silence`,
    });
  }
  if (agentCliff !== null) {
    blocked.push(agentCliff);
    byAgent.clear();
  }
  const heard = [...byAgent].filter(([, silence]) => silence.kind === 'heard').map(([failure]) => failure);
  if (heard.length > 0) {
    blocked.push({
      gate: 'host-reachable',
      hosts: heard.map((failure) => failure.service.host),
      reason: `Nova says down but the host agent is heard (within HEARTBEAT_DOWN_AFTER ${config.heartbeatDownAfterSeconds} s): the host runs, only nova-compute is not reporting`,
    });
  }
  const passed = new Set<FreshFailure>([
    ...heartbeat.passed,
    ...[...byAgent].filter(([, silence]) => silence.kind !== 'heard').map(([failure]) => failure),
  ]);
  return { heartbeat, blocked, passed: candidates.filter((failure) => passed.has(failure)) };
}

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
    const judged = judgeHeartbeatChannels(snapshot, fresh);
    heartbeat = judged.heartbeat;
    blocked.push(...judged.blocked);
    fresh = judged.passed;
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
