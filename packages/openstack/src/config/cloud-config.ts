import { z } from 'zod';

/** The auth types lifeguard supports (keystoneauth plugin names, as in clouds.yaml `auth_type`). */
export const AUTH_TYPES = ['password', 'v3applicationcredential', 'admin_token', 'none'] as const;
export type AuthType = (typeof AUTH_TYPES)[number];

/** Keys of a clouds.yaml `auth:` mapping (and OS_* variables, lower-cased, that belong in it). */
export const AUTH_KEYS = [
  'auth_url',
  'username',
  'user_id',
  'password',
  'project_name',
  'project_id',
  'user_domain_name',
  'user_domain_id',
  'project_domain_name',
  'project_domain_id',
  'domain_name',
  'domain_id',
  'application_credential_id',
  'application_credential_name',
  'application_credential_secret',
  'token',
  'endpoint',
] as const;

/** Numbers are accepted where YAML may read an id or a name as one (`project_id: 0123456`). */
const text = z.union([z.string(), z.number()]).transform(String);

const authSchema = z
  .looseObject(Object.fromEntries(AUTH_KEYS.map((key) => [key, text.optional()])))
  .transform((auth) => {
    // `tenant_name`/`tenant_id` are the Keystone v2 names of the project keys.
    const record = auth as Record<string, unknown>;
    if (record.project_name === undefined && record.tenant_name !== undefined)
      record.project_name = String(record.tenant_name);
    if (record.project_id === undefined && record.tenant_id !== undefined)
      record.project_id = String(record.tenant_id);
    return auth as Partial<Record<(typeof AUTH_KEYS)[number], string>>;
  });

/** One entry of `clouds:` in clouds.yaml (after secure.yaml was merged in), as lifeguard reads it. */
export const CloudEntry = z.looseObject({
  auth_type: z.string().optional(),
  auth: authSchema.default({}),
  region_name: text.optional(),
  /** `public` (default), `internal`, `admin` (also with keystoneauth's `URL` suffix: `publicURL`). */
  interface: z
    .string()
    .regex(/^(public|internal|admin)(URL)?$/, 'must be public, internal or admin')
    .optional(),
  identity_api_version: text.optional(),
  compute_endpoint_override: z.string().optional(),
  image_endpoint_override: z.string().optional(),
  identity_endpoint_override: z.string().optional(),
  /** Per-request timeout in seconds. */
  api_timeout: z.coerce.number().positive().optional(),
  cacert: z.string().optional(),
  /** Certificate verification: a YAML boolean or the words true/false (any case). */
  verify: z.union([z.boolean(), z.string().regex(/^(true|false)$/i, 'must be true or false')]).optional(),
});
export type CloudEntry = z.output<typeof CloudEntry>;

/** A cloud configuration resolved from clouds.yaml or OS_* variables, ready to build clients from. */
export interface CloudConfig {
  /** The cloud's name in clouds.yaml, or `envvars` for OS_* variables. */
  name: string;
  /** Where it came from: the clouds.yaml path (and secure.yaml), or `environment`. */
  source: string;
  authType: AuthType;
  auth: Partial<Record<(typeof AUTH_KEYS)[number], string>>;
  regionName: string | null;
  interface: string;
  endpointOverrides: { compute?: string; image?: string };
  /** clouds.yaml `api_timeout` in seconds, or null. */
  apiTimeoutSeconds: number | null;
}

/**
 * The configuration without its secrets, for logs: auth type, auth URL, user, project, region,
 * interface and endpoint overrides.
 */
export function describeCloudConfig(config: CloudConfig): Record<string, unknown> {
  const { auth } = config;
  return {
    cloud: config.name,
    source: config.source,
    authType: config.authType,
    authUrl: auth.auth_url ?? null,
    user: auth.username ?? auth.user_id ?? null,
    project: auth.project_name ?? auth.project_id ?? null,
    applicationCredential: auth.application_credential_id ?? auth.application_credential_name ?? null,
    region: config.regionName,
    interface: config.interface,
    endpointOverrides: { ...config.endpointOverrides, ...(auth.endpoint ? { endpoint: auth.endpoint } : {}) },
  };
}
