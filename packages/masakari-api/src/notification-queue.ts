/**
 * Puts accepted notifications on the `masakari-notification` queue. A notification is stored first
 * (with its uuid in the store's outbox set, in the same write), then its job is added under the id
 * `masakari-notification.<uuid>`, then the uuid leaves the outbox. A process that dies between the
 * two leaves the uuid in the outbox, and the sweep (at start and every few seconds, in any API
 * process) adds the job; BullMQ ignores a second add of an id it holds, so nothing runs twice.
 */
import { masakariNotificationJobId } from '@lifeguard/contracts';
import type { Logger } from '@lifeguard/runtime';
import type { Queue } from 'bullmq';
import { MASAKARI_NOTIFICATION_JOB_NAME, type MasakariNotificationJob } from './records.ts';
import type { MasakariStore } from './store/masakari-store.ts';

/** How long finished jobs are kept on the queue, in seconds (7 days). */
export const NOTIFICATION_JOB_RETENTION_SECONDS = 7 * 24 * 3600;

export interface NotificationQueueOptions {
  queue: Queue;
  store: MasakariStore;
  logger: Logger;
  /** Attempts of each job (BullMQ `attempts`), with exponential backoff from backoffMilliseconds. */
  attempts: number;
  backoffMilliseconds: number;
}

export class NotificationQueue {
  private timer: NodeJS.Timeout | null = null;
  private sweeping: Promise<number> | null = null;

  constructor(private readonly options: NotificationQueueOptions) {}

  /** Adds the job of a stored notification, then takes it out of the outbox. */
  async enqueue(notificationUuid: string): Promise<void> {
    const data: MasakariNotificationJob = { notificationUuid };
    await this.options.queue.add(MASAKARI_NOTIFICATION_JOB_NAME, data, {
      jobId: masakariNotificationJobId(notificationUuid),
      attempts: this.options.attempts,
      backoff: { type: 'exponential', delay: this.options.backoffMilliseconds },
      removeOnComplete: { age: NOTIFICATION_JOB_RETENTION_SECONDS },
      removeOnFail: { age: NOTIFICATION_JOB_RETENTION_SECONDS },
    });
    await this.options.store.markQueued(notificationUuid);
  }

  /** Adds the job of every notification still in the outbox; returns how many. */
  sweep(): Promise<number> {
    this.sweeping ??= this.sweepOnce().finally(() => {
      this.sweeping = null;
    });
    return this.sweeping;
  }

  private async sweepOnce(): Promise<number> {
    const waiting = await this.options.store.unqueuedNotifications();
    for (const uuid of waiting) await this.enqueue(uuid);
    if (waiting.length > 0)
      this.options.logger.info({ count: waiting.length }, 'queued notifications left unqueued');
    return waiting.length;
  }

  /** Sweeps now and then every `intervalSeconds`. */
  start(intervalSeconds: number): void {
    const run = () => {
      this.sweep().catch((error: unknown) =>
        this.options.logger.warn(
          { err: error },
          'the notification outbox could not be swept; trying again later',
        ),
      );
    };
    run();
    this.timer = setInterval(run, intervalSeconds * 1000);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.sweeping?.catch(() => 0);
  }
}
