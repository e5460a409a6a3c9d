import type { IdentityApi } from '@lifeguard/openstack';
import type { Logger } from '@lifeguard/runtime';

/** A Keystone project id as Keystone makes them (a uuid4 without dashes): such an item is an id. */
const PROJECT_ID = /^[0-9a-f]{32}$/;

/**
 * The projects SKIP_SERVERS_IN_PROJECT names by name, looked up in Keystone
 * (`GET /v3/projects?name=`): project id → the configured name, for serverExclusion's
 * `namedProjects`. An item that looks like a Keystone id is matched as an id and not looked up. The
 * outcome is kept `maxAgeMilliseconds`, a failed lookup's too; when Keystone cannot answer, the last
 * answer for that name is used, and a name never resolved excludes nothing (a warning names it and
 * the error):
 * docs/instance-ha-rules.md#server-exclusions.
 */
export class ExcludedProjects {
  private readonly names: ReadonlyArray<string>;
  private readonly known = new Map<string, ReadonlyArray<string>>();
  private cached: { at: number; value: Promise<ReadonlyMap<string, string>> } | null = null;

  constructor(
    private readonly identity: IdentityApi,
    items: ReadonlyArray<string>,
    private readonly logger: Logger,
    private readonly maxAgeMilliseconds = 30_000,
    private readonly now: () => number = Date.now,
  ) {
    this.names = items.filter((item) => !PROJECT_ID.test(item));
  }

  /** Project id → configured name for every name Keystone resolved (now or before); empty without names. */
  get(): Promise<ReadonlyMap<string, string>> {
    if (this.names.length === 0) return Promise.resolve(new Map());
    if (this.cached && this.now() - this.cached.at < this.maxAgeMilliseconds) return this.cached.value;
    const entry = { at: this.now(), value: this.lookUp() };
    this.cached = entry;
    return entry.value;
  }

  private async lookUp(): Promise<ReadonlyMap<string, string>> {
    const found = new Map<string, string>();
    for (const name of this.names) {
      try {
        const ids = (await this.identity.projectsNamed(name)).map((project) => project.id);
        if (ids.length === 0)
          this.logger.warn(
            { project: name },
            'SKIP_SERVERS_IN_PROJECT: Keystone knows no project with this name',
          );
        this.known.set(name, ids);
      } catch (error) {
        // Kept for its age like an answer: many hosts' plans at once do not each wait for Keystone.
        this.logger.warn(
          { err: error, project: name, lastKnownIds: this.known.get(name) ?? [] },
          'SKIP_SERVERS_IN_PROJECT: Keystone could not resolve this project name; its last known ids are used (none: it excludes nothing)',
        );
      }
      for (const id of this.known.get(name) ?? []) found.set(id, name);
    }
    return found;
  }
}
