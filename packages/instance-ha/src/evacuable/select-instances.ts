import type { Server } from '@lifeguard/openstack';
import { type EvacuabilityContext, isServerEvacuable, taggingInEffect } from './evacuable-tags.ts';
import { type ServerExclusion, type ServerExclusionRules, serverExclusion } from './server-exclusions.ts';

/** Server statuses that are evacuated (docs/instance-ha-rules.md#evacuation; Nova accepts vm_state active/stopped/error). */
export const EVACUABLE_STATUSES: ReadonlyArray<string> = ['ACTIVE', 'ERROR', 'SHUTOFF'];

/** Added when resuming a host: an instance caught mid-rebuild by the previous run (docs/instance-ha-rules.md#evacuation). */
export const RESUME_EXTRA_STATUSES: ReadonlyArray<string> = ['REBUILD'];

export interface InstanceSelectionOptions {
  /** The host's evacuation is resumed: REBUILD instances are taken too. */
  readonly resume: boolean;
  /**
   * The operator's exclusions: SKIP_SERVERS_WITH_NAME (case-sensitive fnmatch globs),
   * SKIP_SERVERS_IN_PROJECT, SKIP_SERVERS_WITH_TAG, SKIP_SERVERS_WITH_METADATA and a server's own
   * `<EVACUABLE_TAG>=false` (docs/instance-ha-rules.md#server-exclusions).
   */
  readonly exclusions: ServerExclusionRules;
  /**
   * The evacuable-tag context (TAGGED_IMAGES / TAGGED_FLAVORS and what the cloud has tagged), or null
   * when it could not be built (image or flavor listing failed): then no server is dropped for its
   * tags, as InstanceHA keeps hosts whose query failed (fail-open, docs/instance-ha-rules.md#g5-evacuability).
   */
  readonly evacuability: EvacuabilityContext | null;
}

/** A server an exclusion keeps out of the evacuation, and the rule that did. */
export interface ExcludedServer {
  readonly server: Server;
  readonly exclusion: ServerExclusion;
}

/** Which servers of a failed host are evacuated, and why the others are not. */
export interface InstanceSelection {
  readonly selected: Server[];
  /** Status outside ACTIVE/ERROR/SHUTOFF (REBUILD too when resuming): PAUSED, SUSPENDED, SHELVED, ... */
  readonly wrongStatus: Server[];
  /** Kept out by an operator's exclusion (name, project, tag, metadata, evacuable=false), with the rule. */
  readonly excluded: ReadonlyArray<ExcludedServer>;
  /** Neither its image nor its flavor is evacuable while tagging is in effect (docs/instance-ha-rules.md#evacuable-tags). */
  readonly notEvacuable: Server[];
  /** True when the tag rules were applied (something of an enabled kind is tagged). */
  readonly taggingApplied: boolean;
}

/**
 * Selects the servers to evacuate from `GET /servers/detail?host=<failed host>&all_tenants=1`, in
 * InstanceHA's order (docs/instance-ha-rules.md#evacuation): keep statuses ACTIVE, ERROR, SHUTOFF (plus REBUILD when
 * resuming), drop the servers an exclusion names (SKIP_SERVERS_WITH_NAME first, as InstanceHA; then
 * lifeguard's project, tag, metadata and evacuable=false rules), then keep evacuable servers by the rules of 1.9 when
 * any tagged flavor or image exists. The listing order is kept. An empty selection means the host has
 * nothing to evacuate (success). The evacuation worker plans with it; the capacity gate counts its
 * `selected` (the servers that would need somewhere to go). Pure.
 */
export function selectInstances(
  servers: ReadonlyArray<Server>,
  options: InstanceSelectionOptions,
): InstanceSelection {
  const statuses = new Set([...EVACUABLE_STATUSES, ...(options.resume ? RESUME_EXTRA_STATUSES : [])]);
  const wrongStatus: Server[] = [];
  const byStatus: Server[] = [];
  for (const server of servers) (statuses.has(server.status) ? byStatus : wrongStatus).push(server);
  const kept: Server[] = [];
  const excluded: ExcludedServer[] = [];
  for (const server of byStatus) {
    const exclusion = serverExclusion(server, options.exclusions);
    if (exclusion === null) kept.push(server);
    else excluded.push({ server, exclusion });
  }
  const context = options.evacuability;
  const taggingApplied = context !== null && taggingInEffect(context);
  const selected: Server[] = [];
  const notEvacuable: Server[] = [];
  for (const server of kept) {
    if (context === null || isServerEvacuable(server, context)) selected.push(server);
    else notEvacuable.push(server);
  }
  return { selected, wrongStatus, excluded, notEvacuable, taggingApplied };
}
