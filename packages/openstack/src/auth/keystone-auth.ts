import type { Logger } from '@lifeguard/runtime';
import { z } from 'zod';
import { KeystoneAuthError, OpenStackApiError } from '../errors.ts';
import { type OpenStackTransport, serviceTransport } from '../http/openstack-transport.ts';
import type { RetryPolicy } from '../http/retry-policy.ts';
import type { AuthProvider, EndpointOverrides, ServiceType } from './auth-provider.ts';
import { CatalogService, describeCatalog, selectEndpoint } from './catalog.ts';

/** A user and password (clouds.yaml `auth_type: password`), scoped to a project (or a domain). */
export interface PasswordCredentials {
  kind: 'password';
  username?: string;
  userId?: string;
  password: string;
  userDomainName?: string;
  userDomainId?: string;
  projectName?: string;
  projectId?: string;
  projectDomainName?: string;
  projectDomainId?: string;
  /** Domain scope, used only when no project is given. */
  domainName?: string;
  domainId?: string;
}

/** An application credential (`auth_type: v3applicationcredential`): by id, or by name with its user. */
export interface ApplicationCredentials {
  kind: 'application_credential';
  id?: string;
  name?: string;
  secret: string;
  username?: string;
  userId?: string;
  userDomainName?: string;
  userDomainId?: string;
}

export interface KeystoneAuthOptions {
  /** clouds.yaml `auth.auth_url`: `http://keystone:5000`, `.../v3` or `.../v3/`. */
  authUrl: string;
  credentials: PasswordCredentials | ApplicationCredentials;
  /** Catalog interface: `public` (default), `internal` or `admin`. */
  interface?: string;
  /** clouds.yaml `region_name`; null accepts any region. */
  region?: string | null;
  endpointOverrides?: EndpointOverrides;
  timeoutMilliseconds?: number;
  retry?: Partial<RetryPolicy>;
  logger?: Logger;
}

const TokenResponse = z.object({
  token: z.looseObject({
    expires_at: z.string(),
    issued_at: z.string().optional(),
    catalog: z.array(CatalogService).default([]),
    project: z.looseObject({ id: z.string(), name: z.string().optional() }).optional(),
  }),
});

interface IssuedToken {
  value: string;
  /** Local clock (Date.now()) after which the token is renewed before use. */
  renewAt: number;
  catalog: CatalogService[];
  projectId: string | null;
}

/** Keystone's ISO 8601 timestamps carry microseconds (`...04.000000Z`); keep milliseconds for Date. */
function parseTimestamp(text: string): number {
  return Date.parse(text.replace(/(\.\d{3})\d+/, '$1'));
}

/**
 * Keystone v3 authentication (`POST /v3/auth/tokens`, docs/nova-facts.md#keystone) for the `password`
 * and `v3applicationcredential` auth types. Keeps one token: fetched on first use (concurrent callers
 * share one request), renewed before it expires — at the later of half its lifetime and one minute
 * before `expires_at`, measured on the local clock from the lifetime Keystone gave (immune to clock
 * skew) — and after a 401 from a service. Endpoints come from the token's catalog by service type,
 * interface and region, unless overridden.
 */
export class KeystoneAuth implements AuthProvider {
  readonly authType: string;
  private readonly transport: OpenStackTransport;
  private readonly tokenUrl: string;
  private current: IssuedToken | null = null;
  private pending: Promise<IssuedToken> | null = null;
  /** How many tokens were issued so far (renewal tests and metrics). */
  tokensIssued = 0;

  constructor(private readonly options: KeystoneAuthOptions) {
    this.authType = options.credentials.kind === 'password' ? 'password' : 'v3applicationcredential';
    const base = options.authUrl.replace(/\/+$/, '');
    this.tokenUrl = /\/v3$/.test(base) ? `${base}/auth/tokens` : `${base}/v3/auth/tokens`;
    const secrets = () => this.secrets();
    this.transport = serviceTransport('identity', {
      ...options,
      auth: {
        authType: 'none',
        token: async () => null,
        endpoint: async () => base,
        invalidate: () => false,
        secrets,
      },
    });
  }

  async token(): Promise<string> {
    return (await this.issued()).value;
  }

  /** The project id of the current token's scope (null for domain scope), fetching a token if needed. */
  async projectId(): Promise<string | null> {
    return (await this.issued()).projectId;
  }

  async endpoint(service: ServiceType): Promise<string> {
    const override = this.options.endpointOverrides?.[service];
    if (override) return override.replace(/\/+$/, '');
    const issued = await this.issued();
    const endpointInterface = this.options.interface ?? 'public';
    const region = this.options.region ?? null;
    const url = selectEndpoint(issued.catalog, service, endpointInterface, region);
    if (url === null) {
      throw new KeystoneAuthError(
        this.options.authUrl,
        this.authType,
        null,
        `the token's catalog has no ${service} endpoint with interface ${endpointInterface}${region ? ` in region ${region}` : ''}; it has ${describeCatalog(issued.catalog)}`,
      );
    }
    return url;
  }

  invalidate(token: string | null): boolean {
    if (this.current && this.current.value === token) this.current = null;
    return true;
  }

  secrets(): string[] {
    const values: string[] = [];
    const credentials = this.options.credentials;
    values.push(credentials.kind === 'password' ? credentials.password : credentials.secret);
    if (this.current) values.push(this.current.value);
    return values;
  }

  private issued(): Promise<IssuedToken> {
    if (this.current && Date.now() < this.current.renewAt) return Promise.resolve(this.current);
    if (!this.pending) {
      this.pending = this.authenticate().finally(() => {
        this.pending = null;
      });
    }
    return this.pending;
  }

  private async authenticate(): Promise<IssuedToken> {
    const requestedAt = Date.now();
    let response: Awaited<ReturnType<OpenStackTransport['request']>>;
    try {
      response = await this.transport.request({
        method: 'POST',
        url: this.tokenUrl,
        operation: 'POST /v3/auth/tokens',
        body: this.requestBody(),
        // A token request changes nothing: safe to send again after a timeout or a reset.
        idempotent: true,
      });
    } catch (error) {
      if (error instanceof OpenStackApiError) {
        throw new KeystoneAuthError(
          this.options.authUrl,
          this.authType,
          error.status,
          error.apiMessage,
          error.requestId,
        );
      }
      throw error;
    }
    const value = response.headers.get('x-subject-token');
    if (!value) {
      throw new KeystoneAuthError(
        this.options.authUrl,
        this.authType,
        null,
        'the answer has no X-Subject-Token header',
        response.requestId,
      );
    }
    const parsed = TokenResponse.safeParse(response.body);
    if (!parsed.success) {
      throw new KeystoneAuthError(
        this.options.authUrl,
        this.authType,
        null,
        `unexpected token body: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
        response.requestId,
      );
    }
    const token = parsed.data.token;
    const expiresAt = parseTimestamp(token.expires_at);
    const issuedAt = token.issued_at ? parseTimestamp(token.issued_at) : requestedAt;
    const lifetime = Number.isFinite(expiresAt - issuedAt) ? Math.max(0, expiresAt - issuedAt) : 0;
    const renewAfter = Math.max(lifetime / 2, lifetime - 60_000);
    this.tokensIssued++;
    this.current = {
      value,
      renewAt: requestedAt + renewAfter,
      catalog: token.catalog,
      projectId: token.project?.id ?? null,
    };
    this.options.logger?.info(
      {
        authUrl: this.options.authUrl,
        authType: this.authType,
        expiresAt: token.expires_at,
        requestId: response.requestId,
      },
      'Keystone token issued',
    );
    return this.current;
  }

  private requestBody(): unknown {
    const credentials = this.options.credentials;
    if (credentials.kind === 'application_credential') {
      const credential: Record<string, unknown> = { secret: credentials.secret };
      if (credentials.id) credential.id = credentials.id;
      else {
        credential.name = credentials.name;
        credential.user = userReference(credentials);
      }
      return {
        auth: { identity: { methods: ['application_credential'], application_credential: credential } },
      };
    }
    const auth: Record<string, unknown> = {
      identity: {
        methods: ['password'],
        password: { user: { ...userReference(credentials), password: credentials.password } },
      },
    };
    if (credentials.projectId) auth.scope = { project: { id: credentials.projectId } };
    else if (credentials.projectName) {
      auth.scope = {
        project: {
          name: credentials.projectName,
          domain: domainReference(credentials.projectDomainId, credentials.projectDomainName),
        },
      };
    } else if (credentials.domainId || credentials.domainName) {
      auth.scope = { domain: domainReference(credentials.domainId, credentials.domainName) };
    }
    return { auth };
  }
}

function domainReference(id: string | undefined, name: string | undefined): Record<string, string> {
  if (id) return { id };
  return { name: name ?? 'Default' };
}

function userReference(credentials: {
  username?: string;
  userId?: string;
  userDomainId?: string;
  userDomainName?: string;
}): Record<string, unknown> {
  if (credentials.userId) return { id: credentials.userId };
  return {
    name: credentials.username,
    domain: domainReference(credentials.userDomainId, credentials.userDomainName),
  };
}
