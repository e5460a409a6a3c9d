import {
  FINAL_NOTIFICATION_STATUSES,
  MasakariNotificationJob,
  type MasakariStore,
  type NotificationRecord,
  type RecoveryWorkflowDetail,
} from '@lifeguard/masakari-api';
import type { Logger } from '@lifeguard/runtime';
import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import type { HandlerContext, HandlerResult } from './handlers/handler.ts';
import type { HostFailureHandler } from './handlers/host-failure.ts';
import type { InstanceFailureHandler } from './handlers/instance-failure.ts';
import type { ProcessFailureHandler } from './handlers/process-failure.ts';
import type { MasakariEngineMetrics } from './metrics.ts';
import { notificationAction } from './rules/notification-action.ts';
import { statusAfterAttempt } from './rules/notification-status.ts';
import { workflowDetail } from './workflow-details.ts';

export interface NotificationJobOptions {
  readonly store: Pick<MasakariStore, 'getNotification' | 'getHost' | 'getSegment' | 'setNotificationStatus'>;
  readonly hostFailure: Pick<HostFailureHandler, 'run'>;
  readonly instanceFailure: Pick<InstanceFailureHandler, 'run'>;
  readonly processFailure: Pick<ProcessFailureHandler, 'disable' | 'enable'>;
  readonly metrics: MasakariEngineMetrics;
  readonly logger: Logger;
  readonly retryMilliseconds: number;
}

/** What a job returns: the status it left the notification in and why. */
export interface NotificationJobResult {
  readonly notificationUuid: string;
  readonly status: string;
  readonly reason: string;
}

/**
 * One `masakari-notification` job, as Masakari's engine processes a notification
 * (docs/migrating-from-masakari.md#the-notification-lifecycle): read the notification, its host and
 * segment now; a notification already final is left as it is (a redelivered job); decide with
 * notificationAction; set `running` (or `ignored` at once for a disabled segment, as Masakari does);
 * run the handler; write the status with its workflow details. An `error` is tried once more after
 * LIFEGUARD_MASAKARI_RETRY_SECONDS (the job is delayed, the notification stays `error`) and becomes
 * `failed` if the retry errs too. Every handler is safe to run again.
 */
export class NotificationJob {
  constructor(private readonly options: NotificationJobOptions) {}

  async run(job: Job, token?: string): Promise<NotificationJobResult> {
    const { store, logger } = this.options;
    const data = MasakariNotificationJob.safeParse(job.data);
    if (!data.success)
      throw new UnrecoverableError(`job ${job.id} carries no notification uuid: ${data.error.message}`);
    const uuid = data.data.notificationUuid;
    const notification = await store.getNotification(uuid);
    if (notification === null) throw new UnrecoverableError(`notification ${uuid} is not in the store`);
    if (FINAL_NOTIFICATION_STATUSES.includes(notification.status))
      return {
        notificationUuid: uuid,
        status: notification.status,
        reason: 'already final: nothing done again',
      };
    const retry = notification.status === 'error';
    const result = await this.handle(notification);
    const status = statusAfterAttempt(result.status, retry);
    await store.setNotificationStatus(uuid, status, { workflowDetails: result.details });
    this.options.metrics.notifications.inc({ type: notification.type, status });
    const log = {
      notificationUuid: uuid,
      type: notification.type,
      payload: notification.payload,
      status,
      reason: result.reason,
    };
    if (status === 'error' || status === 'failed')
      logger.error(log, `notification ${uuid} ${status}: ${result.reason}`);
    else logger.info(log, `notification ${uuid} ${status}: ${result.reason}`);
    if (status === 'error' && token !== undefined) {
      // Masakari retries a notification in error once; the job waits for it, the notification stays `error`.
      await job.moveToDelayed(Date.now() + this.options.retryMilliseconds, token);
      throw new DelayedError();
    }
    return { notificationUuid: uuid, status, reason: result.reason };
  }

  /** Reads the host and segment, decides, and runs the handler; @returns the attempt's status */
  private async handle(notification: NotificationRecord): Promise<HandlerResult> {
    const { store } = this.options;
    const uuid = notification.notificationUuid;
    const host = await store.getHost(notification.sourceHostUuid);
    const segment = host === null ? null : await store.getSegment(host.failoverSegmentId);
    if (host === null || segment === null) {
      const reason = `the notification's host ${notification.sourceHostUuid} or its segment is gone`;
      return {
        status: 'ignored',
        reason,
        details: [workflowDetail('NotificationTask', 'SKIPPED', reason, new Date())],
      };
    }
    const action = notificationAction({
      type: notification.type,
      payload: notification.payload,
      segmentEnabled: segment.enabled,
    });
    const skipped = (reason: string) => [workflowDetail('NotificationTask', 'SKIPPED', reason, new Date())];
    // A notification ignored from the start goes straight from `new` to `ignored`, as in Masakari.
    if (action.kind === 'ignore' && notification.status === 'new')
      return { status: 'ignored', reason: action.reason, details: skipped(action.reason) };
    await store.setNotificationStatus(uuid, 'running', { onlyFrom: ['new', 'error', 'running'] });
    if (action.kind === 'ignore' || action.kind === 'finish') {
      const status = action.kind === 'ignore' ? 'ignored' : 'finished';
      return { status, reason: action.reason, details: skipped(action.reason) };
    }
    const context: HandlerContext = {
      notification,
      host,
      segment,
      progress: (detail: RecoveryWorkflowDetail) => this.progress(uuid, detail),
    };
    switch (action.kind) {
      case 'host-failure':
        return this.options.hostFailure.run(context);
      case 'instance-restart':
        return this.options.instanceFailure.run(context, action);
      case 'disable-compute-service':
        return this.options.processFailure.disable(context);
      case 'enable-compute-service':
        return this.options.processFailure.enable(context);
    }
  }

  private async progress(uuid: string, detail: RecoveryWorkflowDetail): Promise<void> {
    await this.options.store
      .setNotificationStatus(uuid, 'running', { workflowDetails: [detail], onlyFrom: ['running'] })
      .catch((error: unknown) =>
        this.options.logger.warn({ err: error, notificationUuid: uuid }, 'workflow detail not recorded'),
      );
  }
}
