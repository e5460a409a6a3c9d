/**
 * The notification lifecycle as Masakari's engine drives it (docs/masakari-api.md#11-notification-lifecycle):
 *
 *   new ──▶ running ──▶ finished | ignored | error
 *   new ──▶ ignored (segment disabled)       error ──▶ running (retried once) ──▶ ... ──▶ failed
 *   new | running | error ──▶ failed (expired, or still in error after its retry)
 *
 * `finished`, `failed` and `ignored` are final. Writing the status a notification already has is
 * allowed and changes nothing but its workflow details, so a redelivered job can repeat its writes.
 */
import type { NotificationStatus } from './records.ts';

const NEXT: Readonly<Record<NotificationStatus, ReadonlyArray<NotificationStatus>>> = {
  new: ['running', 'ignored', 'failed'],
  running: ['finished', 'ignored', 'error', 'failed'],
  error: ['running', 'failed'],
  finished: [],
  failed: [],
  ignored: [],
};

/** Statuses after which nothing more happens to a notification. */
export const FINAL_NOTIFICATION_STATUSES: ReadonlyArray<NotificationStatus> = [
  'finished',
  'failed',
  'ignored',
];

/**
 * Statuses that keep a notification's segment "in use": Masakari refuses to update or delete a
 * segment, or a host of it, while one of its hosts has a notification in one of these.
 */
export const UNFINISHED_NOTIFICATION_STATUSES: ReadonlyArray<NotificationStatus> = [
  'new',
  'running',
  'error',
];

/** What writing status `to` on a notification in status `from` does. */
export type StatusTransition = 'change' | 'unchanged' | 'refused';

/** Whether a notification in `from` may be set to `to` (pure). */
export function notificationTransition(from: NotificationStatus, to: NotificationStatus): StatusTransition {
  if (from === to) return 'unchanged';
  return NEXT[from].includes(to) ? 'change' : 'refused';
}
