import type { TargetHostUse } from '@lifeguard/contracts';

/**
 * The host an instance's evacuate request number `attempt` (0 for the first) names, or null for
 * Nova's scheduler, from the job's reserved host and how it is used (TargetHostUse): `first-attempt`
 * and `then-scheduler` the first request only, `every-attempt` every request, `after-scheduler`
 * every request but the first. A pure function.
 */
export function evacuateTarget(
  use: TargetHostUse,
  targetHost: string | null,
  attempt: number,
): string | null {
  if (targetHost === null) return null;
  switch (use) {
    case 'first-attempt':
    case 'then-scheduler':
      return attempt === 0 ? targetHost : null;
    case 'every-attempt':
      return targetHost;
    case 'after-scheduler':
      return attempt === 0 ? null : targetHost;
  }
}

/**
 * Whether a request sent with the reserved host that Nova refused (409 or 500) is sent again at once
 * without it, to the scheduler: not when the method allows nothing but the reserved host
 * (`every-attempt`), nor when the reserved host is itself the fallback after the scheduler
 * (`after-scheduler`). A pure function.
 */
export function schedulerAfterRefusal(use: TargetHostUse): boolean {
  return use === 'first-attempt' || use === 'then-scheduler';
}

/**
 * Whether an attempt that ended in Nova's NoValidHost is tried again: only when the next request goes
 * elsewhere than the one that failed (a segment's rh_priority from its reserved host to the
 * scheduler, auto_priority from the scheduler to its reserved host); sent to the same place it would
 * only fail again. `attempts` counts the requests sent, the failed one included. FORCE_RESERVED_HOST_
 * EVACUATION's `first-attempt` keeps failing at once. A pure function.
 */
export function retriesAfterNoValidHost(
  use: TargetHostUse,
  targetHost: string | null,
  attempts: number,
): boolean {
  if (use === 'first-attempt' || attempts === 0) return false;
  return evacuateTarget(use, targetHost, attempts) !== evacuateTarget(use, targetHost, attempts - 1);
}
