import type {
  IncidentStore,
  InstanceHaConfig,
  MonitorReportStore,
  MonitorReportVerdict,
} from '@lifeguard/instance-ha';
import type { MasakariStore } from '@lifeguard/masakari-api';
import type { EventJournal, Logger } from '@lifeguard/runtime';
import { hostFailureStatus } from '../rules/notification-status.ts';
import { recoveryPlan } from '../rules/recovery-method.ts';
import { vmoveSync } from '../vmove-sync.ts';
import { isoFromMasakari, workflowDetail } from '../workflow-details.ts';
import { type HandlerContext, type HandlerResult, waitFor } from './handler.ts';

export interface HostFailureOptions {
  readonly reports: Pick<MonitorReportStore, 'record' | 'verdict'>;
  readonly incidents: Pick<IncidentStore, 'get'>;
  /** The incidents' timelines: each instance's outcome becomes a vmove of the notification. */
  readonly journal: Pick<EventJournal, 'incident'>;
  readonly store: Pick<MasakariStore, 'listSegmentHosts' | 'recordVmoves'>;
  readonly config: Pick<InstanceHaConfig, 'reservedHosts' | 'forceReservedHostEvacuation'>;
  readonly logger: Logger;
  readonly verdictTimeoutMilliseconds: number;
  readonly recoveryTimeoutMilliseconds: number;
  readonly watchMilliseconds: number;
}

const JUDGE_TASK = 'HostFailureJudgedTask';
const RECOVERY_TASK = 'HostRecoveryTask';

/**
 * COMPUTE_HOST STOPPED (docs/migrating-from-masakari.md#compute_host): the notification becomes a
 * monitor report the node monitor judges like any failure (MonitorReportStore; its reportedAt is the
 * notification's `created_at`, so a redelivered job records the same report). lifeguard never fences
 * or evacuates on the monitor's word: the report rule and every admission gate decide, and the fence
 * (power off confirmed) comes before any evacuation. The notification then follows the verdict and the
 * incident (hostFailureStatus), and each instance the incident's evacuation moved becomes one of its
 * vmoves (vmoveSync). The segment's recovery_method is mapped by recoveryPlan and its notes recorded.
 */
export class HostFailureHandler {
  constructor(private readonly options: HostFailureOptions) {}

  async run(context: HandlerContext): Promise<HandlerResult> {
    const { reports, incidents, logger } = this.options;
    const uuid = context.notification.notificationUuid;
    const host = context.host.name;
    await this.recordPlan(context);
    if ((await reports.verdict(uuid)) === null)
      await reports.record({
        host,
        source: 'masakari',
        reference: uuid,
        reportedAt: isoFromMasakari(context.notification.createdAt),
      });
    const verdict = await waitFor(() => reports.verdict(uuid), {
      timeoutMilliseconds: this.options.verdictTimeoutMilliseconds,
      intervalMilliseconds: this.options.watchMilliseconds,
    });
    if (verdict === null) {
      const reason = `the node monitor gave no verdict on the report within ${this.options.verdictTimeoutMilliseconds / 1000} s (is it running?)`;
      return {
        status: 'error',
        reason,
        details: [workflowDetail(JUDGE_TASK, 'FAILURE', reason, new Date())],
      };
    }
    logger.info(
      { host, notificationUuid: uuid, verdict },
      `host report ${verdict.verdict}: ${verdict.reason}`,
    );
    const judged = workflowDetail(
      JUDGE_TASK,
      verdict.verdict === 'admitted' ? 'SUCCESS' : 'SKIPPED',
      judgedMessage(verdict),
      new Date(),
    );
    if (verdict.verdict === 'refused') return { ...hostFailureStatus(verdict, null), details: [judged] };
    await context.progress(judged);
    const syncVmoves = vmoveSync(this.options, uuid, verdict.incidentId);
    const ended = await waitFor(
      async () => {
        const incident = await incidents.get(verdict.incidentId);
        // Read after the incident: once it is evacuated, every instance's outcome is journalled.
        await syncVmoves();
        const status = hostFailureStatus(verdict, incident);
        return status.status === 'running' ? null : status;
      },
      {
        timeoutMilliseconds: this.options.recoveryTimeoutMilliseconds,
        intervalMilliseconds: this.options.watchMilliseconds,
      },
    );
    const at = new Date();
    if (ended === null) {
      const reason = `incident ${verdict.incidentId} did not end within ${this.options.recoveryTimeoutMilliseconds / 1000} s`;
      return {
        status: 'error',
        reason,
        details: [judged, workflowDetail(RECOVERY_TASK, 'FAILURE', reason, at)],
      };
    }
    const state =
      ended.status === 'finished' ? 'SUCCESS' : ended.status === 'ignored' ? 'SKIPPED' : 'FAILURE';
    return { ...ended, details: [judged, workflowDetail(RECOVERY_TASK, state, ended.reason, at)] };
  }

  /** Maps the segment's recovery_method (recoveryPlan) and records what lifeguard will do. */
  private async recordPlan(context: HandlerContext): Promise<void> {
    const { config, store, logger } = this.options;
    const hosts = await store.listSegmentHosts(context.segment.uuid);
    const plan = recoveryPlan({
      method: context.segment.recoveryMethod,
      failedHost: context.host.name,
      hosts: hosts.map((each) => ({
        name: each.name,
        reserved: each.reserved,
        onMaintenance: each.onMaintenance,
      })),
      reservedHostsEnabled: config.reservedHosts,
      forceReservedHostEvacuation: config.forceReservedHostEvacuation,
    });
    const placement =
      plan.placement === 'scheduler'
        ? "Nova's scheduler chooses"
        : `lifeguard's reserved hosts first (segment: ${plan.reservedHosts.join(', ') || 'none'})`;
    const message = [`recovery_method ${plan.method}: ${placement}`, ...plan.notes].join('; ');
    if (plan.notes.length > 0) logger.warn({ host: context.host.name, plan }, message);
    await context.progress(workflowDetail('RecoveryMethodTask', 'SUCCESS', message, new Date()));
  }
}

function judgedMessage(verdict: MonitorReportVerdict): string {
  return verdict.verdict === 'admitted'
    ? `admitted by the node monitor's gates: incident ${verdict.incidentId} fences and evacuates the host`
    : `refused${verdict.gate ? ` by ${verdict.gate}` : ''}: ${verdict.reason}`;
}
