import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  ConfigError,
  type ConfigProblem,
  isSecretKey,
  issueProblem,
  readYamlMapping,
} from '@lifeguard/runtime';
import { CloudConfigError } from '../errors.ts';
import { AUTH_KEYS, AUTH_TYPES, type AuthType, type CloudConfig, CloudEntry } from './cloud-config.ts';

export interface LoadCloudConfigOptions {
  /** The cloud to use; default `OS_CLOUD`. */
  cloud?: string;
  /** Environment to read `OS_*` from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Directories searched for clouds.yaml/secure.yaml instead of the standard ones (tests). */
  searchDirectories?: ReadonlyArray<string>;
}

const CLOUD_FILE_NAMES = ['clouds.yaml', 'clouds.yml', 'clouds.json'];
const SECURE_FILE_NAMES = ['secure.yaml', 'secure.yml', 'secure.json'];

/**
 * The standard search directories of openstacksdk/os-client-config, in order: the current directory,
 * `$XDG_CONFIG_HOME/openstack` (default `~/.config/openstack`), `/etc/openstack`.
 */
export function standardSearchDirectories(env: NodeJS.ProcessEnv = process.env): string[] {
  const configHome = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return [process.cwd(), join(configHome, 'openstack'), '/etc/openstack'];
}

function firstExisting(
  explicit: string | undefined,
  directories: ReadonlyArray<string>,
  names: string[],
): string | null {
  if (explicit) return explicit;
  for (const directory of directories) {
    for (const name of names) {
      const path = join(directory, name);
      if (existsSync(path)) return path;
    }
  }
  return null;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Deep merge of secure.yaml into clouds.yaml (secure values win). */
function mergeDeep(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    result[key] = isMapping(value) && isMapping(result[key]) ? mergeDeep(result[key], value) : value;
  }
  return result;
}

/**
 * Resolves the cloud configuration the OpenStack way:
 * 1. a named cloud (`options.cloud` or `OS_CLOUD`) from the first clouds.yaml found
 *    (`OS_CLIENT_CONFIG_FILE`, else the standard directories), with the same cloud of secure.yaml
 *    (`OS_CLIENT_SECURE_FILE` or the standard directories) merged in;
 * 2. otherwise the `OS_*` variables (`OS_AUTH_URL`, `OS_USERNAME`, `OS_PASSWORD`, `OS_PROJECT_NAME`,
 *    `OS_AUTH_TYPE`, `OS_TOKEN`, `OS_ENDPOINT`, `OS_REGION_NAME`, `OS_INTERFACE`,
 *    `OS_COMPUTE_ENDPOINT_OVERRIDE`, ...) as the cloud `envvars`;
 * 3. otherwise the only cloud of clouds.yaml, when it has exactly one.
 * @throws CloudConfigError naming the key (`clouds.<name>.auth.auth_url`) and the file, for invalid
 *   YAML, an unknown cloud, an unsupported auth type or a missing required key. Secrets are masked.
 */
export function loadCloudConfig(options: LoadCloudConfigOptions = {}): CloudConfig {
  const env = options.env ?? process.env;
  const directories = options.searchDirectories ?? standardSearchDirectories(env);
  const cloudsPath = firstExisting(env.OS_CLIENT_CONFIG_FILE, directories, CLOUD_FILE_NAMES);
  const securePath = firstExisting(env.OS_CLIENT_SECURE_FILE, directories, SECURE_FILE_NAMES);
  const wanted = options.cloud ?? (env.OS_CLOUD || undefined);

  if (!wanted && hasAuthVariables(env))
    return resolveEntry('envvars', 'environment', environmentEntry(env), 'OS_');

  const pointedBy = (path: string, variable: string) => (path === env[variable] ? variable : undefined);
  const clouds = cloudsPath
    ? readClouds(cloudsPath, true, pointedBy(cloudsPath, 'OS_CLIENT_CONFIG_FILE'))
    : {};
  const secure =
    securePath && securePath !== cloudsPath
      ? readClouds(securePath, false, pointedBy(securePath, 'OS_CLIENT_SECURE_FILE'))
      : {};
  let name = wanted;
  if (!name) {
    const names = Object.keys(clouds);
    if (names.length !== 1) {
      throw problem(
        'OS_CLOUD',
        'environment',
        cloudsPath
          ? `no cloud selected: set OS_CLOUD to one of ${names.join(', ') || '(none defined)'} in ${cloudsPath}, or set OS_AUTH_URL/OS_ENDPOINT variables`
          : `no cloud configured: no clouds.yaml in ${directories.join(', ')} and no OS_AUTH_URL/OS_ENDPOINT variables`,
      );
    }
    name = names[0]!;
  }
  const raw = clouds[name];
  if (raw !== undefined && raw !== null && !isMapping(raw)) {
    throw problem(`clouds.${name}`, cloudsPath!, 'must be a mapping of settings (auth, region_name, ...)');
  }
  if (!isMapping(raw)) {
    throw problem(
      `clouds.${name}`,
      cloudsPath ?? directories.join(', '),
      cloudsPath
        ? `no cloud named "${name}" (clouds defined: ${Object.keys(clouds).join(', ') || 'none'})`
        : 'no clouds.yaml found',
    );
  }
  const secureEntry = secure[name];
  const merged = isMapping(secureEntry) ? mergeDeep(raw, secureEntry) : raw;
  const source = isMapping(secureEntry) ? `${cloudsPath} + ${securePath}` : cloudsPath!;
  return resolveEntry(name, source, merged, `clouds.${name}.`);
}

/** clouds.yaml or secure.yaml; `pointedByVariable`: the OS_* variable that named the file, if one did. */
function readClouds(path: string, required: boolean, pointedByVariable?: string): Record<string, unknown> {
  let document: Record<string, unknown> | null;
  try {
    document = readYamlMapping(path, {
      required,
      ...(pointedByVariable ? { pointedBy: pointedByVariable } : {}),
    });
  } catch (error) {
    if (error instanceof ConfigError) throw new CloudConfigError(error.problems);
    throw error;
  }
  if (!document) return {};
  const clouds = document.clouds;
  if (clouds === undefined) return {};
  if (!isMapping(clouds)) throw problem('clouds', path, 'must be a mapping of cloud names to settings');
  return clouds;
}

function hasAuthVariables(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.OS_AUTH_URL || env.OS_ENDPOINT || env.OS_URL || env.OS_COMPUTE_ENDPOINT_OVERRIDE);
}

/** OS_* variables as a clouds.yaml entry (`OS_USERNAME` → `auth.username`, `OS_REGION_NAME` → `region_name`). */
function environmentEntry(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const auth: Record<string, string> = {};
  const entry: Record<string, unknown> = { auth };
  const authKeys = new Set<string>(AUTH_KEYS);
  for (const [variable, value] of Object.entries(env)) {
    if (!variable.startsWith('OS_') || value === undefined || value === '') continue;
    let key = variable.slice(3).toLowerCase();
    if (key === 'url') key = 'endpoint';
    if (key === 'tenant_name') key = 'project_name';
    if (key === 'tenant_id') key = 'project_id';
    if (key === 'endpoint_type') key = 'interface';
    if (['cloud', 'client_config_file', 'client_secure_file'].includes(key)) continue;
    if (authKeys.has(key)) auth[key] = value;
    else entry[key] = value;
  }
  return entry;
}

function problem(key: string, source: string, text: string, value: string | null = null): CloudConfigError {
  return new CloudConfigError([{ key, source, problem: text, value }]);
}

/**
 * One clouds.yaml entry, validated: the schema, the auth type (given or inferred), Keystone v3 only,
 * the fields the auth type needs, and the TLS settings Node can honour.
 * @throws CloudConfigError naming the keys as clouds.yaml (or the `keyPrefix` variables) spell them
 */
function resolveEntry(
  name: string,
  source: string,
  raw: Record<string, unknown>,
  keyPrefix: string,
): CloudConfig {
  const envKey = (key: string) =>
    keyPrefix === 'OS_' ? `OS_${key.replace(/^auth\./, '').toUpperCase()}` : `${keyPrefix}${key}`;
  const entry = parseEntry(raw, source, envKey);
  const auth = entry.auth;
  const authType = checkAuthType(entry, source, envKey);
  const compute = entry.compute_endpoint_override ?? auth.endpoint;
  checkAuthFields(authType, auth, compute, source, envKey);
  checkTls(entry, source, envKey);
  return {
    name,
    source,
    authType,
    auth,
    regionName: entry.region_name ?? null,
    interface: (entry.interface ?? 'public').replace(/URL$/, ''),
    endpointOverrides: {
      ...(compute ? { compute: compute.replace(/\/+$/, '') } : {}),
      ...(entry.image_endpoint_override ? { image: entry.image_endpoint_override.replace(/\/+$/, '') } : {}),
      ...(entry.identity_endpoint_override
        ? { identity: entry.identity_endpoint_override.replace(/\/+$/, '') }
        : {}),
    },
    apiTimeoutSeconds: entry.api_timeout ?? null,
  };
}

/**
 * The entry through the CloudEntry schema.
 * @throws CloudConfigError with one problem per schema issue (secret values redacted)
 */
function parseEntry(
  raw: Record<string, unknown>,
  source: string,
  envKey: (key: string) => string,
): CloudEntry {
  const parsed = CloudEntry.safeParse(raw);
  if (!parsed.success) {
    const problems: ConfigProblem[] = parsed.error.issues.map((issue) => {
      const key = issue.path.map(String).join('.');
      return {
        key: envKey(key),
        source,
        problem: issueProblem(issue, valueAt(raw, issue.path)),
        value: describe(key, valueAt(raw, issue.path)),
      };
    });
    throw new CloudConfigError(problems);
  }
  return parsed.data;
}

/**
 * The entry's auth type: `auth_type` (`v3password` read as `password`), else inferred from `auth`.
 * @throws CloudConfigError for an auth type lifeguard does not support, or an identity_api_version
 *   other than 3
 */
function checkAuthType(entry: CloudEntry, source: string, envKey: (key: string) => string): AuthType {
  const authType = (entry.auth_type ?? inferAuthType(entry.auth)).replace(/^v3password$/, 'password');
  if (!(AUTH_TYPES as ReadonlyArray<string>).includes(authType)) {
    throw problem(
      envKey('auth_type'),
      source,
      `unsupported auth type; lifeguard supports ${AUTH_TYPES.join(', ')}`,
      JSON.stringify(authType),
    );
  }
  if (entry.identity_api_version !== undefined && !/^3(\.\d+)?$/.test(entry.identity_api_version)) {
    throw problem(
      envKey('identity_api_version'),
      source,
      'only Keystone v3 is supported',
      JSON.stringify(entry.identity_api_version),
    );
  }
  return authType as AuthType;
}

/**
 * The `auth` fields the auth type needs: auth_url (an http(s) URL) for password and
 * v3applicationcredential; password, a user and a project for password; the secret and an id (or a
 * name with a user) for v3applicationcredential; token for admin_token; and a compute endpoint for the
 * auth types without a service catalog (admin_token, none).
 * @throws CloudConfigError naming the first missing field
 */
function checkAuthFields(
  authType: AuthType,
  auth: CloudEntry['auth'],
  compute: string | undefined,
  source: string,
  envKey: (key: string) => string,
): void {
  const missing = (key: string, why: string) => problem(envKey(`auth.${key}`), source, why);
  if (authType === 'password' || authType === 'v3applicationcredential') {
    if (!auth.auth_url) throw missing('auth_url', `required for auth type ${authType} (the Keystone URL)`);
    checkUrl(envKey('auth.auth_url'), source, auth.auth_url);
  }
  if (authType === 'password') {
    if (!auth.password) throw missing('password', 'required for auth type password');
    if (!auth.username && !auth.user_id)
      throw missing('username', 'username or user_id is required for auth type password');
    if (!auth.project_name && !auth.project_id)
      throw missing(
        'project_name',
        'project_name or project_id is required: Nova calls need a project-scoped token',
      );
  }
  if (authType === 'v3applicationcredential') {
    if (!auth.application_credential_secret)
      throw missing('application_credential_secret', 'required for auth type v3applicationcredential');
    if (
      !auth.application_credential_id &&
      !(auth.application_credential_name && (auth.username || auth.user_id))
    )
      throw missing(
        'application_credential_id',
        'application_credential_id, or application_credential_name with username or user_id, is required',
      );
  }
  if (authType === 'admin_token' && !auth.token) throw missing('token', 'required for auth type admin_token');
  if ((authType === 'admin_token' || authType === 'none') && !compute)
    throw missing(
      'endpoint',
      `auth type ${authType} has no service catalog: give the compute endpoint (auth.endpoint or compute_endpoint_override)`,
    );
}

function inferAuthType(auth: Record<string, string | undefined>): string {
  if (auth.application_credential_secret) return 'v3applicationcredential';
  if (auth.token) return 'admin_token';
  if (!auth.auth_url && auth.endpoint) return 'none';
  return 'password';
}

function checkUrl(key: string, source: string, value: string): void {
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw problem(key, source, 'must be an http:// or https:// URL', JSON.stringify(value));
  }
}

/**
 * Node's HTTPS client takes extra certificate authorities from NODE_EXTRA_CA_CERTS, read at start-up,
 * and the transport has no per-request switch to skip verification: `cacert` must match
 * NODE_EXTRA_CA_CERTS, `verify: false` is refused (rather than silently verifying anyway).
 */
function checkTls(entry: CloudEntry, source: string, envKey: (key: string) => string): void {
  if (entry.cacert && process.env.NODE_EXTRA_CA_CERTS !== entry.cacert) {
    throw problem(
      envKey('cacert'),
      source,
      `start lifeguard with NODE_EXTRA_CA_CERTS=${entry.cacert} (Node reads extra certificate authorities at start-up only)`,
    );
  }
  if (entry.verify !== undefined && String(entry.verify).toLowerCase() === 'false') {
    throw problem(
      envKey('verify'),
      source,
      'turning certificate verification off is not supported; give the CA with cacert and NODE_EXTRA_CA_CERTS',
      'false',
    );
  }
}

function valueAt(raw: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let current = raw;
  for (const key of path) current = isMapping(current) ? current[String(key)] : undefined;
  return current;
}

function describe(key: string, value: unknown): string | null {
  if (value === undefined) return null;
  if (isSecretKey(key)) return '[REDACTED]';
  return JSON.stringify(value);
}
