import { randomBytes, randomUUID } from 'node:crypto';

export interface SimUser {
  id: string;
  name: string;
  domainId: string;
  password: string;
  /** The project the user holds the `admin` role on. */
  projectId: string;
}

export interface SimProject {
  id: string;
  name: string;
  domainId: string;
}

export interface SimApplicationCredential {
  id: string;
  name: string;
  secret: string;
  userId: string;
  projectId: string;
  expiresAt: number | null;
}

export interface SimToken {
  value: string;
  userId: string;
  projectId: string;
  methods: string[];
  issuedAt: number;
  expiresAt: number;
  applicationCredentialId: string | null;
}

export const DEFAULT_DOMAIN = { id: 'default', name: 'Default' };

/**
 * Keystone's identity data for the simulated cloud: domain `Default`, users with a password and the
 * admin role on their project, application credentials, and the tokens issued (fernet-like opaque
 * strings) with a configurable lifetime.
 */
export class IdentityStore {
  readonly users = new Map<string, SimUser>();
  readonly projects = new Map<string, SimProject>();
  readonly applicationCredentials = new Map<string, SimApplicationCredential>();
  private readonly tokens = new Map<string, SimToken>();
  /** Tokens issued so far (renewal tests). */
  issued = 0;

  constructor(
    /** Token lifetime in seconds (Keystone `[token] expiration`, default 3600). */
    public tokenLifetimeSeconds = 3600,
    private readonly now: () => number = Date.now,
  ) {}

  addProject(name: string): SimProject {
    const project = { id: randomUUID().replace(/-/g, ''), name, domainId: DEFAULT_DOMAIN.id };
    this.projects.set(project.id, project);
    return project;
  }

  projectByName(name: string, domain: { id?: string; name?: string }): SimProject | undefined {
    if (!domainMatches(domain)) return undefined;
    return [...this.projects.values()].find((project) => project.name === name);
  }

  addUser(name: string, password: string, project: SimProject): SimUser {
    const user = {
      id: randomUUID().replace(/-/g, ''),
      name,
      domainId: DEFAULT_DOMAIN.id,
      password,
      projectId: project.id,
    };
    this.users.set(user.id, user);
    return user;
  }

  userByName(name: string, domain: { id?: string; name?: string }): SimUser | undefined {
    if (!domainMatches(domain)) return undefined;
    return [...this.users.values()].find((user) => user.name === name);
  }

  addApplicationCredential(
    user: SimUser,
    name: string,
    secret?: string,
    expiresAt: number | null = null,
  ): SimApplicationCredential {
    const credential = {
      id: randomUUID().replace(/-/g, ''),
      name,
      secret: secret ?? randomBytes(24).toString('base64url'),
      userId: user.id,
      projectId: user.projectId,
      expiresAt,
    };
    this.applicationCredentials.set(credential.id, credential);
    return credential;
  }

  issue(
    user: SimUser,
    projectId: string,
    methods: string[],
    applicationCredentialId: string | null = null,
  ): SimToken {
    const issuedAt = this.now();
    const token: SimToken = {
      value: `gAAAAA${randomBytes(90).toString('base64url')}`,
      userId: user.id,
      projectId,
      methods,
      issuedAt,
      expiresAt: issuedAt + this.tokenLifetimeSeconds * 1000,
      applicationCredentialId,
    };
    this.tokens.set(token.value, token);
    this.issued++;
    return token;
  }

  /** The token if it exists and has not expired. */
  validate(value: string | undefined): SimToken | null {
    if (!value) return null;
    const token = this.tokens.get(value);
    if (!token || token.expiresAt <= this.now()) return null;
    return token;
  }

  revoke(value: string): void {
    this.tokens.delete(value);
  }

  revokeAll(): void {
    this.tokens.clear();
  }
}

function domainMatches(domain: { id?: string; name?: string }): boolean {
  if (domain.id !== undefined) return domain.id === DEFAULT_DOMAIN.id;
  if (domain.name !== undefined) return domain.name === DEFAULT_DOMAIN.name;
  return false;
}
