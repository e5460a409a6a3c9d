import {
  INSTANCE_RESTART_JOB_OPTIONS,
  InstanceRestartJob,
  InstanceRestartOutcome,
  instanceRestartJobId,
  JOB_NAMES,
} from '@lifeguard/contracts';
import type { Logger } from '@lifeguard/runtime';
import type { Queue } from 'bullmq';
import { instanceRestartStatus } from '../rules/notification-status.ts';
import { isoFromMasakari, workflowDetail } from '../workflow-details.ts';
import { type HandlerContext, type HandlerResult, waitFor } from './handler.ts';

export interface InstanceFailureOptions {
  /** The `instance-restart` queue. */
  readonly queue: Pick<Queue, 'add' | 'getJob'>;
  readonly logger: Logger;
  readonly timeoutMilliseconds: number;
  readonly watchMilliseconds: number;
}

const TASK = 'InstanceRestartTask';

/**
 * VM notifications (docs/migrating-from-masakari.md#vm): one `instance-restart` job per notification
 * (id `instance-restart.<instance>.<notification uuid>`, so a redelivered notification finds the same
 * job), whose outcome, once the job ends, gives the notification's status (instanceRestartStatus). The
 * restart itself, and its rule (HA_Enabled, the host's health, restarts per hour), are the
 * instance-restart worker's.
 */
export class InstanceFailureHandler {
  constructor(private readonly options: InstanceFailureOptions) {}

  async run(
    context: HandlerContext,
    failure: { readonly instanceId: string; readonly event: string; readonly virDomainEvent: string },
  ): Promise<HandlerResult> {
    const { queue, logger } = this.options;
    const uuid = context.notification.notificationUuid;
    const data = InstanceRestartJob.parse({
      instanceId: failure.instanceId,
      host: context.host.name,
      failure: {
        source: 'masakari-notification',
        event: failure.event,
        virDomainEvent: failure.virDomainEvent,
      },
      notificationUuid: uuid,
      observedAt: isoFromMasakari(context.notification.generatedTime),
    });
    const jobId = instanceRestartJobId(failure.instanceId, uuid);
    await queue.add(JOB_NAMES.instanceRestart, data, { ...INSTANCE_RESTART_JOB_OPTIONS, jobId });
    logger.info(
      { jobId, instanceId: failure.instanceId, notificationUuid: uuid },
      'instance-restart job added',
    );
    await context.progress(
      workflowDetail(TASK, 'RUNNING', `instance-restart job ${jobId} added`, new Date()),
    );
    const ended = await waitFor(
      async () => {
        const job = await queue.getJob(jobId);
        if (job === undefined) return { failed: `instance-restart job ${jobId} is gone` };
        const state = await job.getState();
        if (state === 'completed') return { value: job.returnvalue as unknown };
        if (state === 'failed') return { failed: job.failedReason || 'no reason given' };
        return null;
      },
      {
        timeoutMilliseconds: this.options.timeoutMilliseconds,
        intervalMilliseconds: this.options.watchMilliseconds,
      },
    );
    const at = new Date();
    if (ended === null) {
      const reason = `instance-restart job ${jobId} did not end within ${this.options.timeoutMilliseconds / 1000} s`;
      return { status: 'error', reason, details: [workflowDetail(TASK, 'FAILURE', reason, at)] };
    }
    if ('failed' in ended) {
      const reason = `instance-restart job ${jobId} failed: ${ended.failed}`;
      return { status: 'error', reason, details: [workflowDetail(TASK, 'FAILURE', reason, at)] };
    }
    const outcome = InstanceRestartOutcome.safeParse(ended.value);
    if (!outcome.success) {
      const reason = `instance-restart job ${jobId} returned no outcome: ${outcome.error.message}`;
      return { status: 'error', reason, details: [workflowDetail(TASK, 'FAILURE', reason, at)] };
    }
    const verdict = instanceRestartStatus(outcome.data);
    const state =
      verdict.status === 'finished' ? 'SUCCESS' : verdict.status === 'ignored' ? 'SKIPPED' : 'FAILURE';
    return { ...verdict, details: [workflowDetail(TASK, state, verdict.reason, at)] };
  }
}
