import type { Server } from '@lifeguard/openstack';
import { type ServerExclusionRules, serverExclusion } from './server-exclusions.ts';

/** Server statuses that are evacuated (docs/instance-ha-rules.md#evacuation; Nova accepts vm_state active/stopped/error). */
export const EVACUABLE_STATUSES: ReadonlyArray<string> = ['ACTIVE', 'ERROR', 'SHUTOFF'];

/**
 * The servers of a failed host that an evacuation would take, before the evacuable-tag rules: an
 * evacuable status and no operator exclusion (docs/instance-ha-rules.md#server-exclusions). What the
 * capacity gate counts; the evacuation worker's selectInstances applies the same two rules. Pure.
 */
export function serversToMove<Item extends Pick<Server, 'status' | 'name' | 'metadata'>>(
  servers: ReadonlyArray<Item>,
  rules: ServerExclusionRules,
): Item[] {
  return servers.filter(
    (server) => EVACUABLE_STATUSES.includes(server.status) && serverExclusion(server, rules) === null,
  );
}
