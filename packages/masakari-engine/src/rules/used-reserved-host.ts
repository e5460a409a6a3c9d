import { type PlacementOutcome, shortHostname } from '@lifeguard/instance-ha';

/** A host of the segment, as the decision needs it. */
export interface ReservedFlagHost {
  readonly uuid: string;
  readonly name: string;
  readonly reserved: boolean;
}

/**
 * The Masakari host to mark `reserved: false` once an incident ended, as Masakari's engine marks the
 * reserved host it enabled (`update_host_method`): the reserved host the evacuation put into service
 * and kept there (`inService`), when it is a host of the segment still flagged reserved. Null when the
 * evacuation used none, only held one (auto_priority with the scheduler enough), or gave it back as a
 * spare (nothing landed on it), and when the flag is already clear. Names match exactly or by short
 * hostname. A pure function.
 */
export function usedReservedHost(
  outcome: Pick<PlacementOutcome, 'reservedHost' | 'inService'> | null,
  hosts: ReadonlyArray<ReservedFlagHost>,
): ReservedFlagHost | null {
  if (outcome === null || outcome.reservedHost === null || !outcome.inService) return null;
  const used = outcome.reservedHost;
  const host =
    hosts.find((each) => each.name === used) ??
    hosts.find((each) => shortHostname(each.name) === shortHostname(used));
  return host?.reserved ? host : null;
}
