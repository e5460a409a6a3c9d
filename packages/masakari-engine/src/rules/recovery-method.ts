import type { RecoveryMethod } from '@lifeguard/masakari-api';

/** A host of the failed host's segment, as the plan needs it. */
export interface SegmentHost {
  readonly name: string;
  readonly reserved: boolean;
  readonly onMaintenance: boolean;
}

/** How lifeguard recovers a host of a segment, and what it cannot honour from the segment. */
export interface RecoveryPlan {
  readonly method: RecoveryMethod;
  /**
   * Where the servers go: `scheduler` (evacuate without a target), or lifeguard's reserved hosts
   * (RESERVED_HOSTS) `first` with the scheduler beyond them.
   */
  readonly placement: 'scheduler' | 'reserved-hosts-first';
  /** The segment's reserved hosts Masakari would use (reserved, not on maintenance, not the failed host). */
  readonly reservedHosts: ReadonlyArray<string>;
  /** What differs from Masakari's flow with the configuration given; empty when nothing does. */
  readonly notes: ReadonlyArray<string>;
}

/**
 * The mapping of a segment's `recovery_method` onto lifeguard (docs/migrating-from-masakari.md#recovery-methods):
 * - `auto`: evacuate with no target, Nova's scheduler chooses;
 * - `reserved_host`, `rh_priority`: lifeguard's reserved hosts first (RESERVED_HOSTS: a spare is taken
 *   from the pool of compute services disabled with `reserved` in their reason and enabled; sent as the
 *   target only with FORCE_RESERVED_HOST_EVACUATION), the scheduler beyond them;
 * - `auto_priority`: the scheduler first; lifeguard's spares only add capacity.
 * lifeguard never stops an evacuation for want of a spare (Masakari's `reserved_host` with no reserved
 * host is an `error`), and its pool is the cloud's, not the segment's: a reserved host of the segment
 * is a spare for lifeguard only while its compute service is disabled with `reserved` in its reason.
 * A pure function.
 */
export function recoveryPlan(input: {
  readonly method: RecoveryMethod;
  readonly failedHost: string;
  readonly hosts: ReadonlyArray<SegmentHost>;
  readonly reservedHostsEnabled: boolean;
  readonly forceReservedHostEvacuation: boolean;
}): RecoveryPlan {
  const reservedHosts = input.hosts
    .filter((host) => host.reserved && !host.onMaintenance && host.name !== input.failedHost)
    .map((host) => host.name)
    .sort();
  if (input.method === 'auto' || input.method === 'auto_priority')
    return { method: input.method, placement: 'scheduler', reservedHosts, notes: [] };
  const notes: string[] = [];
  if (!input.reservedHostsEnabled)
    notes.push(
      `recovery_method ${input.method} asks for reserved hosts, but RESERVED_HOSTS is false: Nova's scheduler chooses`,
    );
  if (reservedHosts.length === 0)
    notes.push('the segment has no reserved host available: the servers are evacuated without one');
  if (input.reservedHostsEnabled && !input.forceReservedHostEvacuation)
    notes.push(
      'the spare is enabled as capacity, not sent as the target (FORCE_RESERVED_HOST_EVACUATION is false)',
    );
  return {
    method: input.method,
    placement: input.reservedHostsEnabled ? 'reserved-hosts-first' : 'scheduler',
    reservedHosts,
    notes,
  };
}
