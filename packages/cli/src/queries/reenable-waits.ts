import { type ReenableWait, ReenableWaits, shortHostname, waitingSeconds } from '@lifeguard/instance-ha';
import type { RedisClient } from '@lifeguard/runtime';
import { formatDuration, formatTime, truncate } from '../output/format.ts';
import { renderTable } from '../output/table.ts';

/**
 * A host whose `forced_down` Nova refuses to lift, as the evacuation worker records it: the record,
 * how long the refusals have lasted, and whether the worker already announced it
 * (`host.reenable.waiting`, after LIFEGUARD_REENABLE_WAITING_ALERT_SECONDS).
 */
export interface ReenableWaitView extends ReenableWait {
  readonly waitingSeconds: number;
  /** True once announced: the host waits for its nova-compute to restart. */
  readonly overdue: boolean;
}

/** The recorded waits, by short hostname (records that do not parse are left out). */
export async function reenableWaitViews(
  redis: RedisClient,
  keyPrefix: string,
  now: Date = new Date(),
): Promise<Map<string, ReenableWaitView>> {
  const waits = await new ReenableWaits(redis, keyPrefix).list();
  return new Map(
    waits.map((wait) => [
      shortHostname(wait.host),
      { ...wait, waitingSeconds: waitingSeconds(wait, now), overdue: wait.announcedAt !== null },
    ]),
  );
}

/** `waiting for its nova-compute to restart (Nova refuses forced_down=false for 6 min 02 s)`. */
export function reenableWaitText(wait: ReenableWaitView): string {
  const lasted = formatDuration(wait.waitingSeconds * 1000);
  return wait.overdue
    ? `waiting for its nova-compute to restart (Nova refuses forced_down=false for ${lasted})`
    : `re-enable retrying (Nova refuses forced_down=false for ${lasted})`;
}

/**
 * The section `lifeguard hosts` and `lifeguard status` print under their tables, or null when no
 * host is waiting: each host, since when, and Nova's message, with what to do.
 */
export function renderReenableWaits(waits: ReadonlyMap<string, ReenableWaitView>): string | null {
  if (waits.size === 0) return null;
  const rows = [...waits.values()];
  const overdue = rows.filter((wait) => wait.overdue).map((wait) => wait.host);
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
  ].join('\n');
}
