import { CloudConfigError } from '../errors.ts';

/** The catalog service types lifeguard calls. */
export type ServiceType = 'compute' | 'image' | 'identity';

/**
 * Where a client gets its token and endpoints. Implementations: StaticTokenAuth (`none`,
 * `admin_token`: a fixed token or none, explicit endpoints) and KeystoneAuth (`password`,
 * `v3applicationcredential`: Keystone v3 tokens, catalog endpoints, renewal).
 */
export interface AuthProvider {
  /** The clouds.yaml auth type this provider implements. */
  readonly authType: string;
  /**
   * The token to send as `X-Auth-Token`, fetching or renewing it when needed; null for `none`.
   * @throws KeystoneAuthError | EndpointUnreachableError
   */
  token(): Promise<string | null>;
  /**
   * The base URL of a service (`http://nova:8774/v2.1`, `http://glance:9292`), from an endpoint
   * override or the catalog.
   * @throws CloudConfigError when neither gives one
   */
  endpoint(service: ServiceType): Promise<string>;
  /**
   * Called after an HTTP 401 with the token that was refused; forgets it.
   * @returns true when a new token can be fetched (the call is then retried once)
   */
  invalidate(token: string | null): boolean;
  /** Secret values (token, password, application credential secret) to scrub from any text. */
  secrets(): string[];
}

/**
 * Explicit endpoints (clouds.yaml `compute_endpoint_override`, `image_endpoint_override`,
 * `identity_endpoint_override`).
 */
export type EndpointOverrides = Partial<Record<ServiceType, string>>;

/**
 * `none` and `admin_token` auth: no Keystone; a fixed token (`admin_token`; with Nova's noauth2 it is
 * `user:project`, e.g. `admin:admin`) or none at all, and explicit endpoints.
 */
export class StaticTokenAuth implements AuthProvider {
  constructor(
    readonly authType: 'none' | 'admin_token',
    private readonly fixedToken: string | null,
    private readonly endpoints: EndpointOverrides,
    /** Where the configuration came from, for errors (a clouds.yaml path or `environment`). */
    private readonly source = 'configuration',
  ) {}

  async token(): Promise<string | null> {
    return this.fixedToken;
  }

  async endpoint(service: ServiceType): Promise<string> {
    const url = this.endpoints[service];
    if (!url) {
      throw new CloudConfigError([
        {
          key: `${service}_endpoint_override`,
          source: this.source,
          problem: `auth type ${this.authType} has no service catalog: an explicit ${service} endpoint is needed`,
          value: null,
        },
      ]);
    }
    return url;
  }

  invalidate(): boolean {
    return false;
  }

  secrets(): string[] {
    return this.fixedToken ? [this.fixedToken] : [];
  }
}
