import { HostName, IncidentId, Timestamp } from '@lifeguard/contracts';
import { z } from 'zod';

/**
 * A Masakari segment's `recovery_method`, as the evacuation of one of its hosts honours it
 * (docs/migrating-from-masakari.md#recovery-methods): `auto` Nova's scheduler; `reserved_host` a
 * reserved host of the segment and nothing else; `auto_priority` the scheduler, then a reserved host;
 * `rh_priority` a reserved host, then the scheduler.
 */
export const PLACEMENT_METHODS = ['auto', 'reserved_host', 'auto_priority', 'rh_priority'] as const;
export const PlacementMethod = z.enum(PLACEMENT_METHODS);
export type PlacementMethod = z.infer<typeof PlacementMethod>;

/**
 * How the evacuation of a failed host places its servers, given by the host's Masakari segment: the
 * Masakari engine writes it (from its own store) before it hands the host monitor's report to the node
 * monitor, and binds it to the incident the report was admitted into; the evacuation worker reads it
 * when it plans the host's evacuation. Without a directive the evacuation uses RESERVED_HOSTS' pool.
 */
export const PlacementDirective = z.object({
  /** The failed host (Nova's service host, the Masakari host's name). */
  host: HostName,
  method: PlacementMethod,
  /**
   * The segment's reserved hosts in the order they are tried: reserved, not on maintenance, not the
   * failed host. Whether each can take servers is judged on Nova when the evacuation is planned.
   */
  reservedHosts: z.array(HostName),
  /** The segment, for logs and events: its name and uuid. */
  segment: z.object({ name: z.string(), uuid: z.string().min(1) }),
  /** The Masakari notification that reported the host (the monitor report's reference). */
  reference: z.string().min(1),
  /** The incident the report was admitted into, once the node monitor said so; null before. */
  incidentId: IncidentId.nullable(),
  writtenAt: Timestamp,
});
export type PlacementDirective = z.infer<typeof PlacementDirective>;

/**
 * What the evacuation of an incident did with its host's directive, for the Masakari engine: the
 * reserved host it put into service (the engine then marks the Masakari host `reserved: false`), or
 * why none was used; `refused` when the method allowed no evacuation without a reserved host.
 */
export const PlacementOutcome = z.object({
  incidentId: IncidentId,
  host: HostName,
  method: PlacementMethod,
  /** The reserved host claimed for this incident, or null. */
  reservedHost: HostName.nullable(),
  /**
   * The reserved host was put into service for this incident (enabled, or already enabled and sent
   * servers) and stays so; false while it is only held (auto_priority before the scheduler failed),
   * or once it went back to being a spare.
   */
  inService: z.boolean(),
  /** The evacuation enabled the reserved host's compute service (it was disabled). */
  enabled: z.boolean(),
  /** The evacuation was refused: the method allows nothing but a reserved host, and none was usable. */
  refused: z.boolean(),
  /** What was decided and why, as logged (the candidates that could not be used included). */
  reason: z.string(),
  at: Timestamp,
});
export type PlacementOutcome = z.infer<typeof PlacementOutcome>;
