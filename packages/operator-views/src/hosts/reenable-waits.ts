import { type ReenableWait, ReenableWaits, shortHostname, waitingSeconds } from '@lifeguard/instance-ha';
import type { RedisClient } from '@lifeguard/runtime';
import { formatDuration } from '../format.ts';

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
 * How long, in seconds, a re-enable may be refused before `lifeguard hosts` and `lifeguard status` say
 * what usually ends it: a nova-compute started after a power-on cleans up within seconds, so a longer
 * wait most often means one that was already running when its servers were evacuated (Nova marks
 * evacuation migrations completed only at nova-compute's start, docs/nova-facts.md#compute-services).
 */
export const RESTART_HINT_AFTER_SECONDS = 60;
