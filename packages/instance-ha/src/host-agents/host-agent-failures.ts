import { INSTANCE_HA_CONSTANTS } from '../config/derived.ts';
import type { FreshFailure, ServiceView } from '../services/categorise.ts';
import { type HostAgentEvidence, lastHeartbeatPerHost } from './host-agent-findings.ts';
import { type HostAgentSilenceSettings, judgeHostAgentSilence } from './host-agent-silence.ts';

export interface HostAgentCliffSettings {
  /** HEARTBEAT_DOWN_AFTER, seconds. */
  readonly downAfterSeconds: number;
  /** HEARTBEAT_TIMEOUT, seconds: an agent heard within it counts in the cliff's population. */
  readonly heartbeatTimeoutSeconds: number;
  /** HEARTBEAT_CLIFF_THRESHOLD, percent. */
  readonly cliffThresholdPercent: number;
}

/** The host agent channel's cliff: most agents fell quiet at once, so the monitor is the one cut off. */
export interface HostAgentCliff {
  readonly tripped: boolean;
  /** Agents heard within HEARTBEAT_TIMEOUT, hosts in flight left out. */
  readonly agents: number;
  /** Of them, those silent on every network for more than half of HEARTBEAT_DOWN_AFTER. */
  readonly quiet: number;
  readonly reason: string;
}

export interface HostAgentFailures {
  /** Hosts failed on heartbeats (`host-agent-silent`), not already failed by Nova, in Nova's order. */
  readonly failures: ReadonlyArray<FreshFailure>;
  /** Hosts whose agent is silent on every network while nova-compute reports: the agent is down, not the host. */
  readonly agentSilent: ReadonlyArray<{
    readonly host: string;
    readonly lastHeartbeat: Date;
    readonly reason: string;
  }>;
  /** The earliest moment a host now `awaiting-nova` can be failed, and that host; or null. */
  readonly nextDecision: { readonly at: Date; readonly host: string } | null;
  /** The silence rule's reason per failed host. */
  readonly reasons: ReadonlyMap<string, string>;
}

/**
 * The cliff of the host agent channel, judged on the moment rather than across polls: of the agents
 * heard within HEARTBEAT_TIMEOUT (hosts already in flight left out), the share now silent on every
 * network for more than half of HEARTBEAT_DOWN_AFTER. Hosts that die one by one leave the others
 * sending; a monitor cut off from the hosts' networks hears every agent stop within one heartbeat
 * interval, before the first of them crosses HEARTBEAT_DOWN_AFTER. At HEARTBEAT_CLIFF_THRESHOLD
 * percent or more of at least `heartbeatCliffMinimumHosts` agents, the admission holds every host
 * with an agent (early gates); the hosts it held wait out the mass-event hold-down once it clears.
 */
export function hostAgentCliff(
  evidence: HostAgentEvidence,
  inFlight: ReadonlySet<string>,
  now: Date,
  settings: HostAgentCliffSettings,
): HostAgentCliff {
  let agents = 0;
  let quiet = 0;
  for (const [host, at] of lastHeartbeatPerHost(evidence)) {
    if (inFlight.has(host)) continue;
    const silentFor = now.getTime() - at;
    if (silentFor > settings.heartbeatTimeoutSeconds * 1000) continue;
    agents++;
    if (silentFor > (settings.downAfterSeconds * 1000) / 2) quiet++;
  }
  const tripped =
    agents >= INSTANCE_HA_CONSTANTS.heartbeatCliffMinimumHosts &&
    (quiet * 100) / agents >= settings.cliffThresholdPercent;
  return {
    tripped,
    agents,
    quiet,
    reason: `${quiet} of ${agents} host agents fell quiet at once (HEARTBEAT_CLIFF_THRESHOLD ${settings.cliffThresholdPercent} %): suspected observer partition`,
  };
}

/**
 * The hosts failed by the host agent channel (HEARTBEAT_DETECTION) this moment: every compute service
 * that could be a fresh failure (enabled, or disabled under lifeguard's `process-stopped` marker; not
 * forced down) and is not one already, judged by
 * judgeHostAgentSilence. They then pass every admission gate as Nova's failures do (the channel's
 * cliff among them, hostAgentCliff).
 */
export function hostAgentFailures(
  input: {
    readonly services: ReadonlyArray<ServiceView>;
    readonly alreadyFailed: ReadonlySet<string>;
    readonly evidence: HostAgentEvidence;
    readonly listeningSince: Date | null;
    readonly now: Date;
  },
  settings: HostAgentSilenceSettings,
): HostAgentFailures {
  const failures: FreshFailure[] = [];
  const agentSilent: Array<{ host: string; lastHeartbeat: Date; reason: string }> = [];
  const reasons = new Map<string, string>();
  let nextDecision: { at: Date; host: string } | null = null;
  for (const service of input.services) {
    // A host whose nova-compute stopped is disabled under lifeguard's marker, not by an operator: its
    // death must still be seen.
    const enabled = service.status === 'enabled' || service.marker.kind === 'process-stopped';
    if (!enabled || service.forcedDown || input.alreadyFailed.has(service.host)) continue;
    const silence = judgeHostAgentSilence(
      {
        shortHost: service.shortHost,
        evidence: input.evidence,
        listeningSince: input.listeningSince,
        service,
        now: input.now,
      },
      settings,
    );
    if (silence.kind === 'awaiting-nova' && silence.decideAt !== null) {
      if (nextDecision === null || silence.decideAt < nextDecision.at)
        nextDecision = { at: silence.decideAt, host: service.host };
    }
    if (silence.kind === 'agent-silent-host-reports')
      agentSilent.push({ host: service.host, lastHeartbeat: silence.lastHeartbeat, reason: silence.reason });
    if (silence.kind !== 'silent') continue;
    failures.push({ service, reason: 'host-agent-silent' });
    reasons.set(service.host, silence.reason);
  }
  return {
    failures,
    agentSilent,
    nextDecision,
    reasons,
  };
}
