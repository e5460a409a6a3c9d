import type { RecoveryMethod } from '@lifeguard/masakari-api';

/** A host of the failed host's segment, as the plan needs it. */
export interface SegmentHost {
  readonly name: string;
  readonly reserved: boolean;
  readonly onMaintenance: boolean;
  /** Masakari's integer id and `created_at` (its own order of reserved hosts: newest first). */
  readonly id: number;
  readonly createdAt: string;
}

/** Where an evacuation sends servers: a reserved host of the segment, or Nova's scheduler. */
export type PlacementStage = 'reserved-host' | 'scheduler';

/** How a host of a segment is recovered, as its recovery_method says and lifeguard honours it. */
export interface RecoveryPlan {
  readonly method: RecoveryMethod;
  /** Where the servers go, in the order tried; a stage absent is never used. */
  readonly order: ReadonlyArray<PlacementStage>;
  /**
   * The segment's reserved hosts in the order they are tried, as Masakari lists them: reserved, not
   * on maintenance, not the failed host; newest first (`created_at`, then id, descending). Empty for
   * `auto`, which never uses one.
   */
  readonly reservedHosts: ReadonlyArray<string>;
  /** What the operator should know before the evacuation: empty when nothing stands out. */
  readonly notes: ReadonlyArray<string>;
}

const ORDER: Readonly<Record<RecoveryMethod, ReadonlyArray<PlacementStage>>> = {
  auto: ['scheduler'],
  reserved_host: ['reserved-host'],
  auto_priority: ['scheduler', 'reserved-host'],
  rh_priority: ['reserved-host', 'scheduler'],
};

/**
 * A segment's `recovery_method` as lifeguard honours it (docs/migrating-from-masakari.md#recovery-methods),
 * from Masakari's engine (`masakari/engine/manager.py`, `drivers/taskflow/driver.py`):
 * - `auto`: evacuate with no target, Nova's scheduler chooses;
 * - `reserved_host`: a reserved host of the segment, enabled and sent as the target; never the
 *   scheduler: with no usable reserved host nothing is evacuated and the notification ends `error`;
 * - `auto_priority`: the scheduler first; a server it cannot place goes to a reserved host;
 * - `rh_priority`: a reserved host first; the scheduler for what it cannot take, or when none is usable.
 * The candidates are the segment's hosts flagged `reserved` and not `on_maintenance`, newest first as
 * Masakari lists them; the evacuation worker judges on Nova, when it plans, which of them can take
 * servers. A pure function.
 */
export function recoveryPlan(input: {
  readonly method: RecoveryMethod;
  readonly failedHost: string;
  readonly hosts: ReadonlyArray<SegmentHost>;
}): RecoveryPlan {
  const order = ORDER[input.method];
  if (!order.includes('reserved-host')) return { method: input.method, order, reservedHosts: [], notes: [] };
  const reservedHosts = input.hosts
    .filter((host) => host.reserved && !host.onMaintenance && host.name !== input.failedHost)
    .sort((a, b) => (a.createdAt === b.createdAt ? b.id - a.id : a.createdAt < b.createdAt ? 1 : -1))
    .map((host) => host.name);
  const notes: string[] = [];
  if (reservedHosts.length === 0)
    notes.push(
      input.method === 'reserved_host'
        ? 'the segment has no reserved host available: nothing will be evacuated (No reserved_hosts available for evacuation)'
        : "the segment has no reserved host available: Nova's scheduler alone places the servers",
    );
  return { method: input.method, order, reservedHosts, notes };
}
