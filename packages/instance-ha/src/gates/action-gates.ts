import { type HostAgentSilence, judgeHostAgentSilence } from '../host-agents/host-agent-silence.ts';
import { judgeMonitorReport, type MonitorReportJudgement } from '../monitor-reports/monitor-report-rule.ts';
import type { ServiceView } from '../services/categorise.ts';
import { shortHostname } from '../services/short-hostname.ts';
import { judgeAggregateLimits } from './aggregate-impact.ts';
import type { GateJudgement, HostGate } from './gate.ts';
import type { GateSnapshot } from './gate-snapshot.ts';
import { sendsHeartbeats } from './heartbeat-rule.ts';
import { judgeHostReports } from './host-reports.ts';
import { serviceOfHost } from './service-of-host.ts';
import { thresholdGate } from './threshold-gate.ts';

const pass = (gate: string, reason: string): GateJudgement => ({ gate, verdict: 'pass', reason });

/** True when the service's `updated_at` was written after `openedAt` (an ISO time). */
function reportedSince(service: ServiceView, openedAt: string): boolean {
  return service.updatedAtDate !== null && service.updatedAtDate.getTime() > Date.parse(openedAt);
}

/**
 * With HEARTBEAT_DETECTION and the host agents' evidence read, what the host agent silence rule says
 * of `host` now (a re-check knows no listener start: silence counts from the last heartbeat); null
 * without them.
 */
function hostAgentSilence(snapshot: GateSnapshot, service: ServiceView): HostAgentSilence | null {
  const { config } = snapshot;
  if (!config.heartbeatDetection || !snapshot.hostAgents) return null;
  return judgeHostAgentSilence(
    {
      shortHost: service.shortHost,
      evidence: snapshot.hostAgents,
      listeningSince: null,
      service,
      now: snapshot.now,
    },
    {
      downAfterSeconds: config.heartbeatDownAfterSeconds,
      novaReportIntervalSeconds: config.novaReportIntervalSeconds,
    },
  );
}

/** What the host's admitted monitor report says now (judgeMonitorReport), or null without one. */
function monitorReport(snapshot: GateSnapshot, service: ServiceView): MonitorReportJudgement | null {
  const report = snapshot.monitorReports?.get(service.shortHost);
  if (report === undefined || service.forcedDown) return null;
  return judgeMonitorReport(
    { report, service, alreadyFailed: false, now: snapshot.now },
    { novaReportIntervalSeconds: snapshot.config.novaReportIntervalSeconds },
  );
}

/**
 * The host is still down by its own reports, never by a `forced_down` (see judgeHostReports); else it
 * came back. Before the fence (no fence record yet), a host that is forced down with an `updated_at`
 * within DELTA is judged by when that `updated_at` was written: after its incident opened, it is a
 * report (lifeguard writes nothing to the service of a host it has not fenced), so the host came back;
 * at or before, it may be the write that forced the host down (lifeguard's own, before Redis lost the
 * incident it rebuilt, or an operator's), so the action defers until `updated_at` is older than DELTA.
 * Once the host is fenced (its open incident has a fence record, the evacuation's check):
 * - a power-off confirmed by its BMC, or kdump: down unless Nova says `up` (someone lifted
 *   `forced_down` and it reports), because lifeguard's own `forced_down` write freshens `updated_at`;
 * - an operator's confirmation: accepted only once the last `updated_at` is older than DELTA (defer
 *   until then: the write that forced it down freshened it too), unless the operator's override of
 *   the reports was recorded (`confirm-fenced --host-is-reporting-override`).
 * With HEARTBEAT_DETECTION, before the fence a host Nova still calls up is down when the host agent
 * silence rule says `silent` (its agent silent on every network, nova-compute's report overdue since
 * before that silence); `awaiting-nova` defers; any other answer means it came back. Likewise a host
 * whose monitor report the node monitor admitted is down while judgeMonitorReport still says `failed`
 * (nova-compute silent since the report, its report overdue); a report after it means it came back.
 */
export const hostDownGate: HostGate = {
  name: 'host-down',
  judge(snapshot, host) {
    const service = serviceOfHost(snapshot, host);
    if (service === null)
      return { gate: this.name, verdict: 'refuse', reason: `Nova has no nova-compute service on ${host}` };
    const incident = snapshot.openIncidents.get(service.shortHost) ?? null;
    const fence = incident?.fence ?? null;
    const reports = judgeHostReports(service, snapshot.config.deltaSeconds);
    const back = {
      gate: this.name,
      verdict: 'recovered' as const,
      reason: `${host} reports to Nova: ${reports.evidence}`,
    };
    if (fence === null) {
      if (!reports.reporting) return pass(this.name, `${host} is down: ${reports.evidence}`);
      const silence = hostAgentSilence(snapshot, service);
      if (silence?.kind === 'silent') return pass(this.name, `${host} is down: ${silence.reason}`);
      if (silence?.kind === 'awaiting-nova')
        return { gate: this.name, verdict: 'defer', reason: `${host}: ${silence.reason}` };
      const reported = monitorReport(snapshot, service);
      if (reported?.kind === 'failed') return pass(this.name, `${host} is down: ${reported.reason}`);
      if (reported?.kind === 'awaiting-nova')
        return { gate: this.name, verdict: 'defer', reason: `${host}: ${reported.reason}` };
      if (service.forcedDown && incident !== null && !reportedSince(service, incident.openedAt)) {
        return {
          gate: this.name,
          verdict: 'defer',
          reason: `${host} was forced down before incident ${incident.id} opened and its updated_at is not older than DELTA yet (${reports.evidence}): the write that forced it down freshens it too; waiting for DELTA of silence`,
        };
      }
      return back;
    }
    if (fence.proof !== 'operator-confirmed') {
      return !service.forcedDown && reports.reporting
        ? back
        : pass(this.name, `${host} fenced (${fence.proof}, ${fence.method}): ${reports.evidence}`);
    }
    if (!reports.reporting) return pass(this.name, `${host} is silent: ${reports.evidence}`);
    if (fence.reportingOverride !== null)
      return pass(
        this.name,
        `${host} reports to Nova (${reports.evidence}), overridden by ${fence.by ?? 'an operator'}`,
      );
    if (!service.forcedDown) return back;
    return {
      gate: this.name,
      verdict: 'defer',
      reason: `${host} confirmed fenced by ${fence.by ?? 'an operator'} but its updated_at is not older than DELTA yet (${reports.evidence}): waiting for DELTA of silence`,
    };
  },
};

/**
 * With CHECK_HEARTBEAT, a host whose OS still sends heartbeats within HEARTBEAT_TIMEOUT is alive. With
 * HEARTBEAT_DETECTION, a host whose lifeguard host agent is heard is judged by its agent instead:
 * alive when heard on any network within HEARTBEAT_DOWN_AFTER, else not alive by this gate.
 */
export const heartbeatGate: HostGate = {
  name: 'heartbeat',
  judge(snapshot, host) {
    if (!snapshot.config.checkHeartbeat || snapshot.heartbeats === null)
      return pass(this.name, 'heartbeat channel not configured');
    const service = serviceOfHost(snapshot, host);
    const silence = service === null ? null : hostAgentSilence(snapshot, service);
    if (silence?.kind === 'heard')
      return {
        gate: this.name,
        verdict: 'recovered',
        reason: `${host}: ${silence.reason} (HEARTBEAT_DOWN_AFTER ${snapshot.config.heartbeatDownAfterSeconds} s)`,
      };
    if (silence !== null && silence.kind !== 'no-agent') return pass(this.name, `${host}: ${silence.reason}`);
    const last = snapshot.heartbeats.get(shortHostname(host));
    if (last === undefined) return pass(this.name, `no heartbeat recorded from ${host}`);
    const ageSeconds = (snapshot.now.getTime() - last.getTime()) / 1000;
    return sendsHeartbeats(last, snapshot.now, snapshot.config.heartbeatTimeoutSeconds)
      ? {
          gate: this.name,
          verdict: 'recovered',
          reason: `${host} sent a heartbeat ${Math.round(ageSeconds)} s ago (HEARTBEAT_TIMEOUT ${snapshot.config.heartbeatTimeoutSeconds} s)`,
        }
      : pass(this.name, `last heartbeat from ${host} ${Math.round(ageSeconds)} s ago`);
  },
};

/** DISABLED defers every action. */
export const disabledGate: HostGate = {
  name: 'disabled',
  judge(snapshot) {
    return snapshot.config.disabled
      ? { gate: this.name, verdict: 'defer', reason: 'DISABLED is true' }
      : pass(this.name, 'DISABLED is false');
  },
};

/** `instanceha:max_failures` of every evacuable aggregate the host is in, over the impacted hosts. */
export const aggregateLimitGate: HostGate = {
  name: 'aggregate-max-failures',
  judge(snapshot, host) {
    if (!snapshot.config.taggedAggregates || snapshot.aggregates === null)
      return pass(this.name, 'no aggregate limits apply');
    const limits = judgeAggregateLimits(snapshot, [serviceOfHost(snapshot, host)?.host ?? host]);
    const trip = limits.trips[0];
    return trip === undefined
      ? pass(this.name, 'within every instanceha:max_failures')
      : {
          gate: this.name,
          verdict: 'defer',
          reason: `aggregate ${trip.aggregate}: ${trip.impacted} impacted > instanceha:max_failures ${trip.maxFailures}`,
        };
  },
};

/**
 * The gates every action on an earlier decision passes again, in order: a fence (first, retried,
 * taken over, resumed, after the kdump wait) and an evacuation. The node monitor's admission applies
 * the same rules to a whole poll cycle, THRESHOLD through the same gate (thresholdGate.judgeCycle).
 */
export const ACTION_GATES: ReadonlyArray<HostGate> = [
  hostDownGate,
  heartbeatGate,
  disabledGate,
  thresholdGate,
  aggregateLimitGate,
];
