import type { Logger } from '@lifeguard/runtime';
import { type AuthProvider, StaticTokenAuth } from './auth/auth-provider.ts';
import { KeystoneAuth } from './auth/keystone-auth.ts';
import { NovaClient } from './compute/nova-client.ts';
import type { CloudConfig } from './config/cloud-config.ts';
import { describeCloudConfig } from './config/cloud-config.ts';
import { type LoadCloudConfigOptions, loadCloudConfig } from './config/clouds-yaml.ts';
import type { RetryPolicy } from './http/retry-policy.ts';
import { KeystoneClient } from './identity/keystone-client.ts';
import { GlanceClient } from './image/glance-client.ts';

export interface OpenStackClientsOptions extends LoadCloudConfigOptions {
  /** A resolved configuration to use instead of clouds.yaml / OS_* (cloud-sim, tests). */
  config?: CloudConfig;
  logger?: Logger;
  /** Per-request timeout in milliseconds; default clouds.yaml `api_timeout` (seconds), else 30000. */
  timeoutMilliseconds?: number;
  retry?: Partial<RetryPolicy>;
  /** Page size of Nova and Glance list calls (default: Nova 1000, Glance its own default of 25). */
  pageSize?: number;
  /** Use this Nova microversion instead of negotiating one. */
  microversion?: string;
}

/** The clients built from one cloud configuration; they share one token. */
export interface OpenStackClients {
  compute: NovaClient;
  image: GlanceClient;
  identity: KeystoneClient;
  auth: AuthProvider;
  config: CloudConfig;
}

/** The auth provider for a resolved configuration (KeystoneAuth or StaticTokenAuth). */
export function createAuthProvider(
  config: CloudConfig,
  options: { logger?: Logger; timeoutMilliseconds?: number; retry?: Partial<RetryPolicy> } = {},
): AuthProvider {
  const { auth } = config;
  if (config.authType === 'none' || config.authType === 'admin_token') {
    return new StaticTokenAuth(
      config.authType,
      config.authType === 'admin_token' ? (auth.token ?? null) : null,
      config.endpointOverrides,
      config.source,
    );
  }
  const credentials =
    config.authType === 'password'
      ? {
          kind: 'password' as const,
          password: auth.password!,
          ...optional({
            username: auth.username,
            userId: auth.user_id,
            userDomainName: auth.user_domain_name,
            userDomainId: auth.user_domain_id,
            projectName: auth.project_name,
            projectId: auth.project_id,
            projectDomainName: auth.project_domain_name,
            projectDomainId: auth.project_domain_id,
            domainName: auth.domain_name,
            domainId: auth.domain_id,
          }),
        }
      : {
          kind: 'application_credential' as const,
          secret: auth.application_credential_secret!,
          ...optional({
            id: auth.application_credential_id,
            name: auth.application_credential_name,
            username: auth.username,
            userId: auth.user_id,
            userDomainName: auth.user_domain_name,
            userDomainId: auth.user_domain_id,
          }),
        };
  return new KeystoneAuth({
    authUrl: auth.auth_url!,
    credentials,
    interface: config.interface,
    region: config.regionName,
    endpointOverrides: config.endpointOverrides,
    ...optional({
      logger: options.logger,
      timeoutMilliseconds: options.timeoutMilliseconds,
      retry: options.retry,
    }),
  });
}

/**
 * Builds the Nova, Glance and Keystone clients from clouds.yaml, secure.yaml and OS_* variables (see
 * loadCloudConfig), or from `options.config`. Nothing is sent until the first call.
 * @throws CloudConfigError for an invalid or incomplete configuration (naming the key and file)
 */
export function createOpenStackClients(options: OpenStackClientsOptions = {}): OpenStackClients {
  const config = options.config ?? loadCloudConfig(options);
  const timeoutMilliseconds =
    options.timeoutMilliseconds ??
    (config.apiTimeoutSeconds === null ? undefined : config.apiTimeoutSeconds * 1000);
  const logger = options.logger?.child({ component: 'openstack', cloud: config.name });
  const common = optional({ logger, timeoutMilliseconds, retry: options.retry });
  const auth = createAuthProvider(config, common);
  // `cloud` is already a field of every line of this child logger: a second one would repeat the key.
  const { cloud: _named, ...description } = describeCloudConfig(config);
  logger?.info(description, 'OpenStack cloud configured');
  return {
    compute: new NovaClient({
      auth,
      ...common,
      ...optional({ pageSize: options.pageSize, microversion: options.microversion }),
    }),
    image: new GlanceClient({ auth, ...common, ...optional({ pageSize: options.pageSize }) }),
    identity: new KeystoneClient({ auth, ...common }),
    auth,
    config,
  };
}

/** The entries whose value is defined (for exactOptionalPropertyTypes-friendly spreading). */
function optional<Shape extends Record<string, unknown>>(
  values: Shape,
): { [Key in keyof Shape]?: Exclude<Shape[Key], undefined> } {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as {
    [Key in keyof Shape]?: Exclude<Shape[Key], undefined>;
  };
}
