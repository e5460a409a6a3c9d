import {
  formatTime,
  RESTART_HINT_AFTER_SECONDS,
  type ReenableWaitView,
  reenableWaitText,
  truncate,
} from '@lifeguard/operator-views';
import { renderTable } from './table.ts';

/**
 * The section `lifeguard hosts` and `lifeguard status` print under their tables, or null when no
 * host is waiting: each host, since when, and Nova's message, with what to do (at once for a wait
 * past the alert time, `⚠`; as a hint for one past RESTART_HINT_AFTER_SECONDS).
 */
export function renderReenableWaits(waits: ReadonlyMap<string, ReenableWaitView>): string | null {
  if (waits.size === 0) return null;
  const rows = [...waits.values()];
  const overdue = rows.filter((wait) => wait.overdue).map((wait) => wait.host);
  const lingering = rows
    .filter((wait) => !wait.overdue && wait.waitingSeconds >= RESTART_HINT_AFTER_SECONDS)
    .map((wait) => wait.host);
  return [
    `Re-enable waiting for Nova (${rows.length})`,
    renderTable(
      ['host', 'incident', 'since', 'state', 'Nova says'],
      rows.map((wait) => [
        wait.host,
        wait.incidentId,
        formatTime(wait.since),
        reenableWaitText(wait),
        truncate(wait.reason, 60),
      ]),
    ),
    ...(overdue.length > 0
      ? [
          `⚠ ${overdue.join(', ')}: start nova-compute on the host; it marks its evacuations completed and lifeguard then re-enables it`,
        ]
      : []),
    ...(lingering.length > 0
      ? [
          `${lingering.join(', ')}: Nova lifts forced_down once nova-compute starts on the host and marks its evacuations completed; if it already runs there (the host came back before its servers were evacuated), restart it`,
        ]
      : []),
  ].join('\n');
}
