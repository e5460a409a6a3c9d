import type { ServiceView } from '../services/categorise.ts';
import type { HostAgentEvidence } from './host-agent-findings.ts';

/** The settings the silence rule reads (config.yaml keys). */
export interface HostAgentSilenceSettings {
  /** HEARTBEAT_DOWN_AFTER, seconds. */
  readonly downAfterSeconds: number;
  /** NOVA_REPORT_INTERVAL, seconds: the computes' `report_interval`. */
  readonly novaReportIntervalSeconds: number;
}

/**
 * How far a host agent's heartbeat times (the monitor's clock) and Nova's `updated_at` (the
 * controllers' clock) may disagree and still be compared: a report written up to this long after the
 * last heartbeat is not taken for a report made after the agent fell silent.
 */
export const CLOCK_TOLERANCE_SECONDS = 1;

/**
 * How old nova-compute's last report must be before it counts as missed: one and a half report
 * intervals, and at least one interval plus CLOCK_TOLERANCE_SECONDS (a report comes late by the time
 * the periodic task and the database take).
 */
export function novaReportOverdueSeconds(novaReportIntervalSeconds: number): number {
  return Math.max(1.5 * novaReportIntervalSeconds, novaReportIntervalSeconds + CLOCK_TOLERANCE_SECONDS);
}

/**
 * What the host agent channel says of one host:
 * - `no-agent`: no lifeguard host agent was ever heard from it (Nova alone decides);
 * - `heard`: heard on at least one network within HEARTBEAT_DOWN_AFTER: the host is up;
 * - `agent-silent-host-reports`: silent on every network, but nova-compute reported after the last
 *   heartbeat: the agent (or its path to every monitor) died, not the host; never a failure;
 * - `awaiting-nova`: silent on every network, nova-compute's next report not yet overdue (`decideAt`:
 *   when it will be); not yet a failure;
 * - `silent`: silent on every network for HEARTBEAT_DOWN_AFTER and nova-compute's report overdue
 *   since before the silence: the host failed.
 */
export type HostAgentSilence =
  | { readonly kind: 'no-agent'; readonly reason: string }
  | { readonly kind: 'heard'; readonly heardOn: ReadonlyArray<string>; readonly reason: string }
  | { readonly kind: 'agent-silent-host-reports'; readonly lastHeartbeat: Date; readonly reason: string }
  | {
      readonly kind: 'awaiting-nova';
      readonly lastHeartbeat: Date;
      /** When the rule can first say `silent`, or null while Nova gives no `updated_at`. */
      readonly decideAt: Date | null;
      readonly reason: string;
    }
  | {
      readonly kind: 'silent';
      readonly lastHeartbeat: Date;
      readonly silentSeconds: number;
      readonly reason: string;
    };

export interface HostAgentSilenceInput {
  /** The host's short name, as the agents name it. */
  readonly shortHost: string;
  readonly evidence: HostAgentEvidence;
  /**
   * Since when the heartbeats were listened for without a break (the node monitor's listener start),
   * or null when unknown (a worker's re-check): silence counts from the later of the last heartbeat
   * and this moment.
   */
  readonly listeningSince: Date | null;
  /** The host's compute service as Nova listed it at about `now`, or null when Nova has none. */
  readonly service: ServiceView | null;
  readonly now: Date;
}

const seconds = (milliseconds: number) => Math.round(milliseconds / 100) / 10;

/** The host's last heartbeat on each network it was ever heard on. */
function lastHeartbeats(evidence: HostAgentEvidence, shortHost: string): Array<[string, Date]> {
  const heard: Array<[string, Date]> = [];
  for (const [network, times] of evidence.networks) {
    const at = times.get(shortHost);
    if (at !== undefined) heard.push([network, at]);
  }
  return heard.sort(([a], [b]) => a.localeCompare(b));
}

/**
 * The host agent silence rule (docs/host-agent.md#detection-on-heartbeats), one for the node
 * monitor's detection and every later action's re-check. A host is failed on heartbeats alone only
 * when all of these hold:
 * 1. its agent is silent on every network it was heard on for HEARTBEAT_DOWN_AFTER (silence counted
 *    from the later of its last heartbeat and `listeningSince`): one network silent is a network
 *    fault, never a failed host;
 * 2. nova-compute has not reported since the last heartbeat (its `updated_at` is not later than the
 *    last heartbeat plus CLOCK_TOLERANCE_SECONDS): a report after it proves the host ran while its
 *    agent was silent;
 * 3. nova-compute's report is overdue (novaReportOverdueSeconds): without it, an agent that died on a
 *    live host a moment after nova-compute's last report would look like a dead host.
 * A service without a parsable `updated_at` never satisfies 3.
 */
export function judgeHostAgentSilence(
  input: HostAgentSilenceInput,
  settings: HostAgentSilenceSettings,
): HostAgentSilence {
  const { now, service } = input;
  const heard = lastHeartbeats(input.evidence, input.shortHost);
  if (heard.length === 0) return { kind: 'no-agent', reason: `no host agent heard from ${input.shortHost}` };
  const downAfter = settings.downAfterSeconds * 1000;
  const heardOn = heard.filter(([, at]) => now.getTime() - at.getTime() <= downAfter).map(([name]) => name);
  if (heardOn.length > 0)
    return { kind: 'heard', heardOn, reason: `host agent heard on ${heardOn.join(', ')}` };
  const lastHeartbeat = new Date(Math.max(...heard.map(([, at]) => at.getTime())));
  const silentFrom = Math.max(lastHeartbeat.getTime(), input.listeningSince?.getTime() ?? 0);
  const silentFor = now.getTime() - silentFrom;
  const silence = `host agent silent on every network (${heard.map(([name]) => name).join(', ')}) for ${seconds(now.getTime() - lastHeartbeat.getTime())} s`;
  const updatedAt = service?.updatedAtDate ?? null;
  if (updatedAt !== null && updatedAt.getTime() > lastHeartbeat.getTime() + CLOCK_TOLERANCE_SECONDS * 1000) {
    return {
      kind: 'agent-silent-host-reports',
      lastHeartbeat,
      reason: `${silence}, but nova-compute reported ${seconds(updatedAt.getTime() - lastHeartbeat.getTime())} s after the last heartbeat: the agent is silent, the host runs`,
    };
  }
  const overdue = novaReportOverdueSeconds(settings.novaReportIntervalSeconds) * 1000;
  const decideAt =
    updatedAt === null ? null : Math.max(silentFrom + downAfter, updatedAt.getTime() + overdue);
  if (updatedAt === null || decideAt === null || silentFor < downAfter || now.getTime() < decideAt) {
    const nova =
      updatedAt === null
        ? 'Nova gives no updated_at to compare'
        : `nova-compute's last report ${seconds(now.getTime() - updatedAt.getTime())} s ago (overdue after ${overdue / 1000} s)`;
    return {
      kind: 'awaiting-nova',
      lastHeartbeat,
      decideAt: decideAt === null ? null : new Date(decideAt),
      reason: `${silence}; ${nova}`,
    };
  }
  return {
    kind: 'silent',
    lastHeartbeat,
    silentSeconds: seconds(now.getTime() - lastHeartbeat.getTime()),
    reason: `${silence}; nova-compute's last report ${seconds(now.getTime() - updatedAt.getTime())} s ago, none since the last heartbeat`,
  };
}
