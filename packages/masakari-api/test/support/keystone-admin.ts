// The few Keystone v3 calls the real-Keystone test makes as the harness's admin: tokens, a region,
// service and endpoint of its own for the API under test, and a user without the admin role.

export interface ProjectToken {
  token: string;
  projectId: string;
}

/**
 * fetch, sent again when the connection breaks before an answer: Keystone's gunicorn may close a
 * kept-alive connection just as it is reused (`other side closed`). Only for calls that may repeat.
 */
async function fetchAgainOnBrokenConnection(url: string, init: RequestInit): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(url, init);
    } catch (error) {
      if (attempt >= 3 || !(error instanceof TypeError)) throw error;
    }
  }
}

export class KeystoneAdmin {
  private adminToken: ProjectToken | null = null;

  constructor(
    readonly authUrl: string,
    readonly adminPassword: string,
  ) {}

  private url(path: string): string {
    const base = this.authUrl.replace(/\/+$/, '');
    return `${/\/v3$/.test(base) ? base : `${base}/v3`}${path}`;
  }

  /** A project-scoped token of `user` (domain Default) on project `project`. */
  async token(user: string, password: string, project = 'admin'): Promise<ProjectToken> {
    const response = await fetchAgainOnBrokenConnection(this.url('/auth/tokens?nocatalog'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: {
            methods: ['password'],
            password: { user: { name: user, domain: { id: 'default' }, password } },
          },
          scope: { project: { name: project, domain: { id: 'default' } } },
        },
      }),
    });
    if (response.status !== 201) throw new Error(`Keystone refused a token for ${user}: ${response.status}`);
    const body = (await response.json()) as { token: { project: { id: string } } };
    return { token: response.headers.get('x-subject-token')!, projectId: body.token.project.id };
  }

  async admin(): Promise<ProjectToken> {
    this.adminToken ??= await this.token('admin', this.adminPassword);
    return this.adminToken;
  }

  /** An admin call; returns the parsed body (null for 204). */
  async call(method: string, path: string, body?: unknown): Promise<Record<string, unknown> | null> {
    const { token } = await this.admin();
    const send =
      method === 'GET' || method === 'DELETE' || method === 'PUT' ? fetchAgainOnBrokenConnection : fetch;
    const response = await send(this.url(path), {
      method,
      headers: { 'X-Auth-Token': token, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (response.status >= 300)
      throw new Error(`Keystone ${method} ${path}: ${response.status} ${await response.text()}`);
    return response.status === 204 ? null : ((await response.json()) as Record<string, unknown>);
  }

  /**
   * Registers the API in the catalog as Masakari is registered (type `instance-ha`, name
   * `masakari`, URL with the project id), in a region of its own so that runs side by side do not
   * see each other's endpoint. Returns what to delete afterwards.
   */
  async registerMasakari(region: string, url: string): Promise<() => Promise<void>> {
    await this.call('POST', '/regions', { region: { id: region } });
    const service = (await this.call('POST', '/services', {
      service: { type: 'instance-ha', name: 'masakari', description: 'lifeguard Masakari API (test)' },
    })) as { service: { id: string } };
    const endpoint = (await this.call('POST', '/endpoints', {
      endpoint: { service_id: service.service.id, interface: 'public', region_id: region, url },
    })) as { endpoint: { id: string } };
    return async () => {
      await this.call('DELETE', `/endpoints/${endpoint.endpoint.id}`);
      await this.call('DELETE', `/services/${service.service.id}`);
      await this.call('DELETE', `/regions/${region}`);
    };
  }

  /** A user with only the `member` role on the admin project; returns its token and a cleanup. */
  async memberUser(name: string): Promise<{ token: string; remove: () => Promise<void> }> {
    const password = `pw-${name}`;
    const { projectId } = await this.admin();
    const user = await this.createUser(name, password);
    const roles = (await this.call('GET', '/roles?name=member')) as { roles: Array<{ id: string }> };
    await this.call('PUT', `/projects/${projectId}/users/${user.id}/roles/${roles.roles[0]!.id}`);
    const { token } = await this.token(name, password);
    return { token, remove: async () => void (await this.call('DELETE', `/users/${user.id}`)) };
  }

  /**
   * Creates the user, sent again when the connection broke (Keystone's server closing an idle
   * keep-alive connection as the request left); a 409 then means the first one was made: it is found
   * by its name.
   */
  private async createUser(name: string, password: string): Promise<{ id: string }> {
    const { token } = await this.admin();
    const response = await fetchAgainOnBrokenConnection(this.url('/users'), {
      method: 'POST',
      headers: { 'X-Auth-Token': token, 'Content-Type': 'application/json' },
      body: JSON.stringify({ user: { name, password, domain_id: 'default' } }),
    });
    if (response.status === 409) {
      const found = (await this.call('GET', `/users?name=${encodeURIComponent(name)}`)) as {
        users: Array<{ id: string }>;
      };
      if (found.users[0]) return found.users[0];
    }
    if (response.status >= 300)
      throw new Error(`Keystone POST /users: ${response.status} ${await response.text()}`);
    return ((await response.json()) as { user: { id: string } }).user;
  }
}
