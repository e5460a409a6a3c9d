import { JOB_NAMES } from '@lifeguard/contracts';
import type { IncidentStore } from '@lifeguard/instance-ha';
import type { Logger } from '@lifeguard/runtime';
import type { Job, Queue } from 'bullmq';

export interface FailedFenceReconcilerOptions {
  /** The `fencing` queue. */
  queue: Queue;
  incidents: IncidentStore;
  logger: Logger;
  /** Seconds between two passes (LIFEGUARD_FENCING_RECONCILE_SECONDS). */
  intervalSeconds: number;
  /**
   * A fence job that failed although a retry could help is retried this many seconds after it failed
   * (LIFEGUARD_FENCING_RETRY_FAILED_AFTER_SECONDS); 0 never retries it automatically.
   */
  retryFailedAfterSeconds: number;
  /** Told after each pass how many failed fence jobs of open incidents wait for an operator. */
  onAwaitingOperator?: (count: number) => void;
}

/**
 * Picks failed fence jobs up again. The node monitor does not announce a host again while its
 * incident is open, so without this a failed fence would wait for a person forever:
 * - once an operator confirmed the host off (`lifeguard host confirm-fenced`, a fence record with
 *   proof `operator-confirmed`), the job is retried at once, and goes on from the recorded fence to
 *   the Nova marking and the evacuation hand-off without touching the BMC;
 * - a job that failed for a reason a retry can fix (an unreachable BMC, a power-off not confirmed in
 *   time) is retried `retryFailedAfterSeconds` after it failed — InstanceHA starts such a host over
 *   at the next poll (docs/instance-ha-rules.md#host-job step 1);
 * - a job that failed for good (fencing.yaml has no entry, rejected credentials, a BMC identity
 *   mismatch) stays failed until a person fixes the cause and retries it, or confirms the host off.
 * Jobs of closed incidents are left alone. Several workers may run passes at once: retrying a job
 * another worker already retried is refused by BullMQ and ignored here.
 */
export class FailedFenceReconciler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(private readonly options: FailedFenceReconcilerOptions) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.pass()
        .then(() => undefined)
        .catch((error: unknown) =>
          this.options.logger.warn({ err: error }, 'failed-fence reconciliation pass failed'),
        )
        .finally(() => {
          this.running = null;
        });
    }, this.options.intervalSeconds * 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One pass over the failed jobs; returns the ids of the jobs it retried. */
  async pass(now: number = Date.now()): Promise<string[]> {
    const retried: string[] = [];
    let awaitingOperator = 0;
    const failed: Job[] = await this.options.queue.getFailed(0, 999);
    for (const job of failed) {
      if (job.name !== JOB_NAMES.fence || typeof job.id !== 'string') continue;
      const incidentId = (job.data as { incidentId?: unknown }).incidentId;
      if (typeof incidentId !== 'string') continue;
      const incident = await this.options.incidents.get(incidentId);
      if (incident === null || incident.state === 'closed') continue;
      const unrecoverable = (job.failedReason ?? '').startsWith('not recoverable');
      const confirmed = incident.fence !== null;
      const due =
        !unrecoverable &&
        this.options.retryFailedAfterSeconds > 0 &&
        now - (job.finishedOn ?? now) >= this.options.retryFailedAfterSeconds * 1000;
      if (!confirmed && !due) {
        if (unrecoverable || this.options.retryFailedAfterSeconds === 0) awaitingOperator++;
        continue;
      }
      try {
        await job.retry('failed');
        retried.push(job.id);
        this.options.logger.info(
          {
            jobId: job.id,
            host: incident.host,
            incidentId,
            reason: confirmed ? incident.fence?.proof : 'retry-due',
          },
          confirmed
            ? 'failed fence job retried: the host has a fence record now'
            : 'failed fence job retried',
        );
      } catch (error) {
        this.options.logger.debug(
          { err: error, jobId: job.id },
          'fence job was not retried (already retried elsewhere?)',
        );
      }
    }
    this.options.onAwaitingOperator?.(awaitingOperator);
    return retried;
  }
}
