/** A Keystone project as lifeguard reads it: its id, name and domain. */
export interface Project {
  readonly id: string;
  readonly name: string;
  readonly domain_id: string;
}

/** The Identity API (Keystone v3) calls lifeguard makes. */
export interface IdentityApi {
  /**
   * `GET /v3/projects?name=<name>`: the projects called `name` (one per domain at most; none when no
   * project has that name). Needs a role that may list projects (admin or reader).
   */
  projectsNamed(name: string): Promise<Project[]>;
}
