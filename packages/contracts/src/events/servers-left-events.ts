import { z } from 'zod';
import { eventBase as base } from './event-base.ts';
import { HostName, IncidentId } from './identifiers.ts';

/* Servers left where they are: a host not fenced for want of room, and servers not evacuated. */

/** Why another compute host cannot take a failed host's servers now (capacity gate, its event). */
export const HostUnavailability = z.enum(['disabled', 'down', 'forced down', 'being recovered']);
export type HostUnavailability = z.infer<typeof HostUnavailability>;

/**
 * A failed host was not fenced because its servers would have nowhere to go: no other compute host
 * is enabled (or a usable spare), up and free of an incident (docs/instance-ha-rules.md#capacity-before-fencing).
 * The fence job looks again every POLL and goes on, through every gate, once room appears.
 */
export const HostCapacityInsufficientEvent = z.object({
  ...base,
  type: z.literal('host.capacity.insufficient'),
  data: z.object({
    host: HostName,
    incidentId: IncidentId,
    /** Servers of the host its evacuation would take. */
    serverCount: z.number().int().positive(),
    /** What is missing, in words: `no compute host can take the 2 server(s) of compute-3: of 5 other ...`. */
    reason: z.string(),
    /** Every other compute host and why it cannot take servers now. */
    unavailable: z.array(z.object({ host: z.string(), why: HostUnavailability })),
  }),
});

/**
 * An instance of a fenced host that lifeguard did not evacuate, and whose absence does not fail the
 * host:
 * - `deleted`: its owner deleted the server (Nova answers 404) before or during its evacuation;
 * - `status`: its status is not one lifeguard evacuates (PAUSED, SUSPENDED, SHELVED, ...);
 * - `name`, `project`, `tag`, `metadata`: an operator's exclusion (SKIP_SERVERS_WITH_NAME,
 *   SKIP_SERVERS_IN_PROJECT, SKIP_SERVERS_WITH_TAG, SKIP_SERVERS_WITH_METADATA);
 * - `evacuable-false`: its own metadata says `<EVACUABLE_TAG>=false`;
 * - `not-evacuable`: tagging is in effect and neither its image nor its flavor is tagged evacuable.
 */
export const InstanceEvacuationSkippedEvent = z.object({
  ...base,
  type: z.literal('instance.evacuation.skipped'),
  data: z.object({
    host: HostName,
    incidentId: IncidentId,
    instanceId: z.string().min(1),
    instanceName: z.string(),
    reason: z.enum([
      'deleted',
      'status',
      'name',
      'project',
      'tag',
      'metadata',
      'evacuable-false',
      'not-evacuable',
    ]),
    /** Which rule, in words: `tag "octavia" is in SKIP_SERVERS_WITH_TAG` (absent for `deleted`). */
    detail: z.string().optional(),
    /** Evacuate requests lifeguard had sent for it in this incident. */
    attempts: z.number().int().nonnegative(),
    novaRequestId: z.string().nullable(),
  }),
});
