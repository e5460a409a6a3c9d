import type { Server } from '@lifeguard/openstack';
import { fnmatchCase } from './server-name-filter.ts';

/**
 * Why a server of a failed host is kept out of its evacuation by an operator's rule
 * (docs/instance-ha-rules.md#server-exclusions):
 * - `name`: its name matches a SKIP_SERVERS_WITH_NAME glob;
 * - `project`: its `tenant_id` is in SKIP_SERVERS_IN_PROJECT, or is the id of a project named there;
 * - `tag`: it carries a Nova server tag of SKIP_SERVERS_WITH_TAG;
 * - `metadata`: its metadata has a `key=value` of SKIP_SERVERS_WITH_METADATA;
 * - `evacuable-false`: its own metadata says `<EVACUABLE_TAG>=false` (the server asks not to be moved).
 */
export type ServerExclusionReason = 'name' | 'project' | 'tag' | 'metadata' | 'evacuable-false';

/** The rule that excluded a server, and the words that say which one. */
export interface ServerExclusion {
  readonly reason: ServerExclusionReason;
  /** `name matches SKIP_SERVERS_WITH_NAME "amphora-*"`, `tag "octavia" (SKIP_SERVERS_WITH_TAG)`, ... */
  readonly detail: string;
}

/** The config.yaml keys the exclusions are made of. */
export interface ServerExclusionRules {
  readonly skipServersWithName: ReadonlyArray<string>;
  readonly skipServersInProject: ReadonlyArray<string>;
  readonly skipServersWithTag: ReadonlyArray<string>;
  readonly skipServersWithMetadata: ReadonlyArray<string>;
  readonly evacuableTag: string;
  /**
   * The ids of the projects SKIP_SERVERS_IN_PROJECT names by name, each with that name (Keystone's
   * answer, see ExcludedProjects); absent or empty: items are matched as project ids only.
   */
  readonly namedProjects?: ReadonlyMap<string, string>;
}

/** One SKIP_SERVERS_WITH_METADATA item, split at its first `=`. */
export interface MetadataMatch {
  readonly key: string;
  readonly value: string;
}

/**
 * `key=value` → { key, value } (split at the first `=`, both trimmed as list items are; the server's
 * value must then equal it exactly); null for an item without `=` or with an empty key.
 */
export function parseMetadataMatch(item: string): MetadataMatch | null {
  const at = item.indexOf('=');
  if (at < 0) return null;
  const key = item.slice(0, at).trim();
  return key === '' ? null : { key, value: item.slice(at + 1).trim() };
}

/** Server fields the exclusions read (`tags` from microversion 2.26). */
export type ExcludableServer = Pick<Server, 'name' | 'metadata'> & {
  readonly tenant_id?: string | undefined;
  readonly tags?: ReadonlyArray<string> | undefined;
};

/**
 * The first rule that keeps `server` out of its host's evacuation, in the order name, project, tag,
 * metadata, evacuable-false; null when none does. Pure.
 */
export function serverExclusion(
  server: ExcludableServer,
  rules: ServerExclusionRules,
): ServerExclusion | null {
  const glob = rules.skipServersWithName.find((pattern) => fnmatchCase(server.name, pattern));
  if (glob !== undefined) return { reason: 'name', detail: `name matches SKIP_SERVERS_WITH_NAME "${glob}"` };
  if (server.tenant_id !== undefined) {
    if (rules.skipServersInProject.includes(server.tenant_id))
      return { reason: 'project', detail: `project ${server.tenant_id} is in SKIP_SERVERS_IN_PROJECT` };
    const name = rules.namedProjects?.get(server.tenant_id);
    if (name !== undefined && rules.skipServersInProject.includes(name))
      return {
        reason: 'project',
        detail: `project ${server.tenant_id} ("${name}") is in SKIP_SERVERS_IN_PROJECT`,
      };
  }
  const tag = (server.tags ?? []).find((each) => rules.skipServersWithTag.includes(each));
  if (tag !== undefined) return { reason: 'tag', detail: `tag "${tag}" is in SKIP_SERVERS_WITH_TAG` };
  const metadata = server.metadata ?? {};
  for (const item of rules.skipServersWithMetadata) {
    const match = parseMetadataMatch(item);
    if (match !== null && metadata[match.key] === match.value)
      return {
        reason: 'metadata',
        detail: `metadata ${match.key}=${match.value} (SKIP_SERVERS_WITH_METADATA)`,
      };
  }
  const own = metadata[rules.evacuableTag];
  if (own !== undefined && own.trim().toLowerCase() === 'false')
    return { reason: 'evacuable-false', detail: `its metadata says ${rules.evacuableTag}=${own}` };
  return null;
}
