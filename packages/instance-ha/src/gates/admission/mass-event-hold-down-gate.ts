import type { AdmissionGate } from '@lifeguard/contracts';
import type { ServiceView } from '../../services/categorise.ts';
import { type KdumpClock, kdumpDecisionOf } from './kdump-gate.ts';

/**
 * The gates that block a mass event: many hosts silent at once, which is more often the observer or
 * the network cut off than hosts dead (docs/instance-ha-rules.md#mass-event-hold-down).
 */
export const MASS_EVENT_GATES = [
  'heartbeat-cliff',
  'all-services-stale',
  'threshold',
  'aggregate-threshold',
] as const;
export type MassEventGate = (typeof MASS_EVENT_GATES)[number];

/** A host that went silent as part of a blocked mass event, as the next cycles remember it. */
export interface MassEventHold {
  /** The mass gate that blocked it last. */
  readonly gate: MassEventGate;
  /** The first cycle a mass gate blocked it. */
  readonly heldSince: Date;
  /**
   * When its hold-down runs from: the first cycle it got past every mass gate again (the block
   * cleared for it), moved on to each later cycle in which another held host of the event reported
   * again; null while blocked.
   */
  readonly clearedAt: Date | null;
}

/** The holds by host as Nova names it; the node monitor keeps them from one cycle to the next. */
export type MassEventHolds = ReadonlyMap<string, MassEventHold>;

export const NO_MASS_EVENT_HOLDS: MassEventHolds = new Map();

/** A held host and when it is released if it stays silent. */
export interface HeldHost {
  readonly host: string;
  readonly gate: MassEventGate;
  readonly until: Date;
}

export interface HoldDownJudgement {
  /** Failed hosts that go on to the next gate. */
  readonly released: ReadonlyArray<ServiceView>;
  readonly held: ReadonlyArray<HeldHost>;
  /** Hosts whose block cleared in this cycle (their hold-down starts now). */
  readonly clearedNow: ReadonlyArray<string>;
}

/**
 * The mass-event hold-down over the failed hosts that got past every mass gate this cycle. A host a
 * mass gate blocked in an earlier cycle is admitted only once it has stayed silent for
 * `holdDownSeconds` after the block cleared for it, or after the last host of the event that came
 * back, whichever is later: a mass outage that ends does so in waves, as long as waves keep coming the
 * outage is still ending, and its last hosts are the likeliest to be healthy and about to report. Its own death seen positively ends
 * the hold at once: with CHECK_KDUMP, a fence_kdump packet sent after its last report. A host never
 * part of a mass event is not held.
 */
export function judgeMassEventHoldDown(
  survivors: ReadonlyArray<ServiceView>,
  holds: MassEventHolds,
  settings: {
    readonly holdDownSeconds: number;
    readonly checkKdump: boolean;
    readonly kdumpTimeoutSeconds: number;
  },
  kdumpClocks: ReadonlyMap<string, KdumpClock>,
  now: Date,
): HoldDownJudgement {
  const released: ServiceView[] = [];
  const held: HeldHost[] = [];
  const clearedNow: string[] = [];
  for (const service of survivors) {
    const hold = holds.get(service.host);
    if (!hold) {
      released.push(service);
      continue;
    }
    if (hold.clearedAt === null) clearedNow.push(service.host);
    const clearedAt = hold.clearedAt ?? now;
    const until = new Date(clearedAt.getTime() + settings.holdDownSeconds * 1000);
    if (now.getTime() >= until.getTime() || diesInItsCrashKernel(service, kdumpClocks, settings, now)) {
      released.push(service);
    } else {
      held.push({ host: service.host, gate: hold.gate, until });
    }
  }
  return { released, held, clearedNow };
}

/** With CHECK_KDUMP: the host's crash kernel has sent fence_kdump since its last report. */
function diesInItsCrashKernel(
  service: ServiceView,
  clocks: ReadonlyMap<string, KdumpClock>,
  settings: { readonly checkKdump: boolean; readonly kdumpTimeoutSeconds: number },
  now: Date,
): boolean {
  if (!settings.checkKdump) return false;
  const clock = clocks.get(service.host);
  if (!clock || clock.lastPacketAt === null) return false;
  return kdumpDecisionOf(service, clock, settings, now) === 'kdump-fenced';
}

/**
 * The holds for the next cycle: every host a mass gate blocked this cycle is held (its clearing
 * forgotten if it had cleared); a host whose block cleared now starts its hold-down; a host that is
 * no longer failed (it reports again, or is gone) or was admitted is let go. When a held host reports
 * again, the hold-down of every held host whose block had cleared starts again from this cycle: the
 * event is still coming back in waves.
 */
export function nextMassEventHolds(
  previous: MassEventHolds,
  cycle: {
    readonly blocked: ReadonlyArray<{
      readonly gate: AdmissionGate | 'threshold' | 'aggregate-threshold';
      readonly hosts: ReadonlyArray<string>;
    }>;
    readonly stillFailed: ReadonlySet<string>;
    readonly clearedNow: ReadonlyArray<string>;
    readonly admitted: ReadonlySet<string>;
    readonly now: Date;
  },
): MassEventHolds {
  const next = new Map<string, MassEventHold>();
  const cameBack = [...previous.keys()].some(
    (host) => !cycle.stillFailed.has(host) && !cycle.admitted.has(host),
  );
  for (const [host, hold] of previous) {
    if (!cycle.stillFailed.has(host) || cycle.admitted.has(host)) continue;
    const restart = cycle.clearedNow.includes(host) || (cameBack && hold.clearedAt !== null);
    next.set(host, restart ? { ...hold, clearedAt: cycle.now } : hold);
  }
  for (const block of cycle.blocked) {
    if (!isMassEventGate(block.gate)) continue;
    for (const host of block.hosts) {
      const earlier = next.get(host) ?? previous.get(host);
      next.set(host, { gate: block.gate, heldSince: earlier?.heldSince ?? cycle.now, clearedAt: null });
    }
  }
  return next;
}

const isMassEventGate = (gate: string): gate is MassEventGate =>
  (MASS_EVENT_GATES as ReadonlyArray<string>).includes(gate);
