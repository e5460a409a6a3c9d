import type {
  Incident,
  IncidentStore,
  MonitorReportStore,
  MonitorReportVerdict,
  PlacementDirectiveStore,
  PlacementOutcome,
} from '@lifeguard/instance-ha';
import type { MasakariStore, RecoveryWorkflowDetail } from '@lifeguard/masakari-api';
import type { EventJournal, Logger } from '@lifeguard/runtime';
import { hostFailureStatus } from '../rules/notification-status.ts';
import { recoveryPlan } from '../rules/recovery-method.ts';
import { usedReservedHost } from '../rules/used-reserved-host.ts';
import { vmoveSync } from '../vmove-sync.ts';
import { isoFromMasakari, workflowDetail } from '../workflow-details.ts';
import { type HandlerContext, type HandlerResult, waitFor } from './handler.ts';

export interface HostFailureOptions {
  readonly reports: Pick<MonitorReportStore, 'record' | 'verdict'>;
  readonly incidents: Pick<IncidentStore, 'get'>;
  readonly directives: Pick<PlacementDirectiveStore, 'write' | 'bind' | 'remove' | 'outcome'>;
  /** The incidents' timelines: each instance's outcome becomes a vmove of the notification. */
  readonly journal: Pick<EventJournal, 'incident'>;
  readonly store: Pick<MasakariStore, 'listSegmentHosts' | 'setHostFlags' | 'recordVmoves'>;
  readonly logger: Logger;
  readonly verdictTimeoutMilliseconds: number;
  readonly recoveryTimeoutMilliseconds: number;
  readonly watchMilliseconds: number;
}

const JUDGE_TASK = 'HostFailureJudgedTask';
const RECOVERY_TASK = 'HostRecoveryTask';
const RESERVED_HOST_TASK = 'ReservedHostTask';

/**
 * COMPUTE_HOST STOPPED (docs/migrating-from-masakari.md#compute_host): the notification becomes a
 * monitor report the node monitor judges like any failure (MonitorReportStore; its reportedAt is the
 * notification's `created_at`, so a redelivered job records the same report). lifeguard never fences
 * or evacuates on the monitor's word: the report rule and every admission gate decide, and the fence
 * (power off confirmed) comes before any evacuation. Before the report, the segment's recovery_method
 * and reserved hosts (recoveryPlan) are written as the host's placement directive, which the
 * evacuation worker follows; it is bound to the incident the report is admitted into and removed once
 * the incident ended or the report was refused. The notification then follows the verdict and the
 * incident (hostFailureStatus); a reserved host the evacuation put into service is marked
 * `reserved: false` in the segment, as Masakari does. Each instance the incident's evacuation moved
 * becomes one of the notification's vmoves (vmoveSync).
 */
export class HostFailureHandler {
  constructor(private readonly options: HostFailureOptions) {}

  async run(context: HandlerContext): Promise<HandlerResult> {
    const { reports, directives, logger } = this.options;
    const uuid = context.notification.notificationUuid;
    const host = context.host.name;
    await this.writeDirective(context);
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
      await directives.remove(host, uuid);
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
    if (verdict.verdict === 'refused') {
      await directives.remove(host, uuid);
      return { ...hostFailureStatus(verdict, null), details: [judged] };
    }
    await directives.bind(host, uuid, verdict.incidentId);
    await context.progress(judged);
    return this.followIncident(context, verdict, judged);
  }

  /** Waits for the admitted host's incident to end; then the status, and the reserved flag of a used host. */
  private async followIncident(
    context: HandlerContext,
    verdict: Extract<MonitorReportVerdict, { verdict: 'admitted' }>,
    judged: RecoveryWorkflowDetail,
  ): Promise<HandlerResult> {
    const { incidents, directives } = this.options;
    const syncVmoves = vmoveSync(this.options, context.notification.notificationUuid, verdict.incidentId);
    const ended = await waitFor(
      async () => {
        const incident = await incidents.get(verdict.incidentId);
        // Read after the incident: once it is evacuated, every instance's outcome is journalled.
        await syncVmoves();
        return hostFailureStatus(verdict, incident).status === 'running' ? null : incident;
      },
      {
        timeoutMilliseconds: this.options.recoveryTimeoutMilliseconds,
        intervalMilliseconds: this.options.watchMilliseconds,
      },
    );
    const at = new Date();
    if (ended === null) {
      // The directive stays: the evacuation, still to come, follows it.
      const reason = `incident ${verdict.incidentId} did not end within ${this.options.recoveryTimeoutMilliseconds / 1000} s`;
      return {
        status: 'error',
        reason,
        details: [judged, workflowDetail(RECOVERY_TASK, 'FAILURE', reason, at)],
      };
    }
    const placement = await directives.outcome(verdict.incidentId);
    const status = hostFailureStatus(verdict, ended, placement);
    const details = [judged];
    const reserved = await this.clearReservedFlag(context, ended, placement);
    if (reserved !== null) details.push(reserved);
    await directives.remove(context.host.name, context.notification.notificationUuid);
    const state =
      status.status === 'finished' ? 'SUCCESS' : status.status === 'ignored' ? 'SKIPPED' : 'FAILURE';
    details.push(workflowDetail(RECOVERY_TASK, state, status.reason, at));
    return { ...status, details };
  }

  /**
   * Writes the host's placement directive from the segment's recovery_method and its reserved hosts
   * now (recoveryPlan), and records the plan as the RecoveryMethodTask workflow detail.
   */
  private async writeDirective(context: HandlerContext): Promise<void> {
    const { store, directives, logger } = this.options;
    const hosts = await store.listSegmentHosts(context.segment.uuid);
    const plan = recoveryPlan({
      method: context.segment.recoveryMethod,
      failedHost: context.host.name,
      hosts,
    });
    await directives.write({
      host: context.host.name,
      method: plan.method,
      reservedHosts: [...plan.reservedHosts],
      segment: { name: context.segment.name, uuid: context.segment.uuid },
      reference: context.notification.notificationUuid,
      incidentId: null,
      writtenAt: new Date().toISOString(),
    });
    const placement = plan.order
      .map((stage) =>
        stage === 'scheduler'
          ? "Nova's scheduler"
          : `a reserved host of the segment (${plan.reservedHosts.join(', ') || 'none'})`,
      )
      .join(', then ');
    const message = [`recovery_method ${plan.method}: ${placement}`, ...plan.notes].join('; ');
    if (plan.notes.length > 0) logger.warn({ host: context.host.name, plan }, message);
    await context.progress(workflowDetail('RecoveryMethodTask', 'SUCCESS', message, new Date()));
  }

  /** Marks the reserved host the evacuation kept in service `reserved: false` (usedReservedHost). */
  private async clearReservedFlag(
    context: HandlerContext,
    incident: Pick<Incident, 'id'>,
    placement: PlacementOutcome | null,
  ): Promise<RecoveryWorkflowDetail | null> {
    const { store, logger } = this.options;
    if (placement?.reservedHost == null) return null;
    const used = usedReservedHost(placement, await store.listSegmentHosts(context.segment.uuid));
    if (used === null) return null;
    await store.setHostFlags(used.uuid, { reserved: false });
    const message = `reserved host ${used.name} took the servers of ${context.host.name} (incident ${incident.id}): marked reserved=false`;
    logger.info({ host: context.host.name, reservedHost: used.name, incidentId: incident.id }, message);
    return workflowDetail(RESERVED_HOST_TASK, 'SUCCESS', message, new Date());
  }
}

function judgedMessage(verdict: MonitorReportVerdict): string {
  return verdict.verdict === 'admitted'
    ? `admitted by the node monitor's gates: incident ${verdict.incidentId} fences and evacuates the host`
    : `refused${verdict.gate ? ` by ${verdict.gate}` : ''}: ${verdict.reason}`;
}
