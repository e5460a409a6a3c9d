import { decideKdump, type KdumpDecision } from '../../kdump/kdump-wait-state.ts';
import type { ServiceView } from '../../services/categorise.ts';

/** A host's kdump wait as read this cycle: its last fence_kdump packet and its wait clock. */
export interface KdumpClock {
  readonly lastPacketAt: Date | null;
  readonly waitStartedAt: Date | null;
}

/**
 * A change to a host's wait clock that the monitor applies after the cycle's decision: `start` a
 * clock (replacing `stale`, an earlier failure's, when not null) or `clear` it (a packet settled it).
 */
export interface KdumpClockUpdate {
  readonly host: string;
  readonly change: 'start' | 'clear';
  readonly stale: Date | null;
}

export interface KdumpGateResult {
  /** Failed hosts to power-fence (no kdump wait, or the wait timed out). */
  readonly normal: ReadonlyArray<ServiceView>;
  /** Failed hosts whose crash kernel sent fence_kdump within KDUMP_TIMEOUT: fenced without power. */
  readonly kdumpFenced: ReadonlyArray<ServiceView>;
  /** Failed hosts still waiting for a packet (a clock starts now, or runs). */
  readonly waiting: ReadonlyArray<string>;
  readonly clockChanges: ReadonlyArray<KdumpClockUpdate>;
}

/**
 * decideKdump for a failed host this cycle: its clock, and its last report as the end of an earlier
 * failure's clock (none once it is forced down: that report predates the fence).
 */
export function kdumpDecisionOf(
  service: ServiceView,
  clock: KdumpClock,
  settings: { readonly kdumpTimeoutSeconds: number },
  now: Date,
): KdumpDecision {
  return decideKdump({
    ...clock,
    now,
    kdumpTimeoutSeconds: settings.kdumpTimeoutSeconds,
    lastReportAt: service.forcedDown ? null : service.updatedAtDate,
  });
}

/**
 * Gate G10, the kdump wait (docs/instance-ha-rules.md#kdump), with CHECK_KDUMP: the kdump state
 * machine decideKdump, which the fence job's wait runs too, once per failed host. A fresh failure's
 * `updated_at` is its last report, which ends an earlier failure's clock. A host with no clock yet
 * starts one and waits; without CHECK_KDUMP every host is power-fenced.
 * @param clocks the failed hosts' packets and clocks, by host as Nova names it
 */
export function judgeKdumpWaits(
  survivors: ReadonlyArray<ServiceView>,
  clocks: ReadonlyMap<string, KdumpClock>,
  settings: { readonly checkKdump: boolean; readonly kdumpTimeoutSeconds: number },
  now: Date,
): KdumpGateResult {
  if (!settings.checkKdump) return { normal: survivors, kdumpFenced: [], waiting: [], clockChanges: [] };
  const normal: ServiceView[] = [];
  const kdumpFenced: ServiceView[] = [];
  const waiting: string[] = [];
  const clockChanges: KdumpClockUpdate[] = [];
  for (const service of survivors) {
    const clock = clocks.get(service.host) ?? { lastPacketAt: null, waitStartedAt: null };
    const decision = kdumpDecisionOf(service, clock, settings, now);
    if (decision === 'start-wait') {
      waiting.push(service.host);
      clockChanges.push({ host: service.host, change: 'start', stale: clock.waitStartedAt });
    } else if (decision === 'waiting') waiting.push(service.host);
    else if (decision === 'kdump-fenced') {
      kdumpFenced.push(service);
      if (clock.waitStartedAt !== null)
        clockChanges.push({ host: service.host, change: 'clear', stale: null });
    } else normal.push(service);
  }
  return { normal, kdumpFenced, waiting, clockChanges };
}
