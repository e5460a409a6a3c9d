import { setTimeout as sleep } from 'node:timers/promises';
import type {
  HostRecord,
  NotificationRecord,
  NotificationStatus,
  RecoveryWorkflowDetail,
  SegmentRecord,
} from '@lifeguard/masakari-api';

/** What a handler is given: the notification with its host and segment, read just now. */
export interface HandlerContext {
  readonly notification: NotificationRecord;
  readonly host: HostRecord;
  readonly segment: SegmentRecord;
  /** Records a workflow detail on the notification while it runs (a failed write is logged only). */
  progress(detail: RecoveryWorkflowDetail): Promise<void>;
}

/** What a handler ends with: the status the attempt gives, why, and the workflow details to record. */
export interface HandlerResult {
  readonly status: NotificationStatus;
  readonly reason: string;
  readonly details: ReadonlyArray<RecoveryWorkflowDetail>;
}

/**
 * Looks with `look` every `intervalMilliseconds` until it returns a value, or `timeoutMilliseconds`
 * passed. @returns the value, or null on the timeout
 */
export async function waitFor<T>(
  look: () => Promise<T | null>,
  options: { readonly timeoutMilliseconds: number; readonly intervalMilliseconds: number },
): Promise<T | null> {
  const deadline = Date.now() + options.timeoutMilliseconds;
  for (;;) {
    const value = await look();
    if (value !== null) return value;
    const left = deadline - Date.now();
    if (left <= 0) return null;
    await sleep(Math.min(options.intervalMilliseconds, left));
  }
}
