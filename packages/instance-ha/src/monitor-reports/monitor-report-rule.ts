import { CLOCK_TOLERANCE_SECONDS, novaReportOverdueSeconds } from '../host-agents/host-agent-silence.ts';
import type { ServiceView } from '../services/categorise.ts';
import type { MonitorReport } from './monitor-report.ts';

/** The settings the report rule reads (config.yaml keys). */
export interface MonitorReportSettings {
  /** NOVA_REPORT_INTERVAL, seconds: the computes' `report_interval`. */
  readonly novaReportIntervalSeconds: number;
}

/**
 * What one monitor report says of its host now:
 * - `no-service`: Nova lists no compute service of that name; refused;
 * - `host-reports`: nova-compute reported after the report arrived: the host runs; refused;
 * - `awaiting-nova`: nova-compute's next report is not overdue yet (`decideAt`: when it is, or null
 *   while Nova gives no `updated_at`); not yet a failure;
 * - `failed`: nova-compute's report is overdue and none came since the report: a fresh failure, which
 *   every admission gate then judges;
 * - `already-failed`: Nova already fails the host (down, stale past DELTA or forced down): the report
 *   adds nothing, the host's own failure goes through the gates.
 */
export type MonitorReportJudgement =
  | { readonly kind: 'no-service'; readonly reason: string }
  | { readonly kind: 'host-reports'; readonly reason: string }
  | { readonly kind: 'awaiting-nova'; readonly decideAt: Date | null; readonly reason: string }
  | { readonly kind: 'failed'; readonly reason: string }
  | { readonly kind: 'already-failed'; readonly reason: string };

const seconds = (milliseconds: number) => Math.round(milliseconds / 100) / 10;

/**
 * The monitor report rule (docs/migrating-from-masakari.md#compute_host): a monitor's word alone never
 * fails a host. A report makes the host a fresh failure only when Nova agrees the host stopped
 * reporting: nova-compute has not reported since the report arrived (its `updated_at` is not later than
 * `reportedAt` plus CLOCK_TOLERANCE_SECONDS) and its report is overdue (novaReportOverdueSeconds, the
 * same bound the host agent silence rule uses), which comes before DELTA. A service Nova already fails
 * (`alreadyFailed`) is judged by Nova's own failure. A pure function of the report, Nova's listing and
 * the clock.
 */
export function judgeMonitorReport(
  input: {
    readonly report: MonitorReport;
    readonly service: ServiceView | null;
    readonly alreadyFailed: boolean;
    readonly now: Date;
  },
  settings: MonitorReportSettings,
): MonitorReportJudgement {
  const { report, service, now } = input;
  if (service === null)
    return { kind: 'no-service', reason: `Nova lists no nova-compute service on ${report.host}` };
  if (input.alreadyFailed || service.forcedDown)
    return { kind: 'already-failed', reason: `Nova already counts ${service.host} failed` };
  const reportedAt = Date.parse(report.reportedAt);
  const updatedAt = service.updatedAtDate;
  if (updatedAt !== null && updatedAt.getTime() > reportedAt + CLOCK_TOLERANCE_SECONDS * 1000)
    return {
      kind: 'host-reports',
      reason: `nova-compute on ${service.host} reported ${seconds(updatedAt.getTime() - reportedAt)} s after the monitor's report: the host runs`,
    };
  const overdue = novaReportOverdueSeconds(settings.novaReportIntervalSeconds) * 1000;
  if (updatedAt === null)
    return {
      kind: 'awaiting-nova',
      decideAt: null,
      reason: `Nova gives no updated_at for ${service.host} to compare`,
    };
  const decideAt = updatedAt.getTime() + overdue;
  const age = `nova-compute's last report ${seconds(now.getTime() - updatedAt.getTime())} s ago`;
  if (now.getTime() < decideAt)
    return {
      kind: 'awaiting-nova',
      decideAt: new Date(decideAt),
      reason: `${age} (overdue after ${overdue / 1000} s)`,
    };
  return {
    kind: 'failed',
    reason: `${report.source} reported ${service.host} stopped; ${age}, none since the report`,
  };
}
