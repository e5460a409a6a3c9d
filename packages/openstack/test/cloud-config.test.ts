import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createLogger } from '@lifeguard/runtime';
import { CloudConfigError, createOpenStackClients, loadCloudConfig, StaticTokenAuth } from '../src/index.ts';

const root = mkdtempSync(join(tmpdir(), 'lifeguard-clouds-'));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;

/** A directory holding the given files. */
function directory(files: Record<string, string>): string {
  const path = join(root, `d${counter++}`);
  mkdirSync(path);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(path, name), text);
  return path;
}

function configError(run: () => unknown): CloudConfigError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof CloudConfigError, `expected CloudConfigError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected CloudConfigError');
}

const CLOUDS = `clouds:
  production:
    auth:
      auth_url: https://keystone.example:5000/v3
      username: lifeguard
      project_name: admin
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionTwo
    interface: internal
    api_timeout: 12
  sim:
    auth_type: admin_token
    auth:
      token: admin:admin
      endpoint: http://127.0.0.1:8774/v2.1
    image_endpoint_override: http://127.0.0.1:9292
`;

describe('clouds.yaml, secure.yaml and OS_* variables', () => {
  it('reads the cloud named by OS_CLOUD and merges its secure.yaml password', () => {
    const dir = directory({
      'clouds.yaml': CLOUDS,
      'secure.yaml': 'clouds:\n  production:\n    auth:\n      password: from-secure-file\n',
    });
    const config = loadCloudConfig({ env: { OS_CLOUD: 'production' }, searchDirectories: [dir] });
    assert.equal(config.name, 'production');
    assert.equal(config.authType, 'password');
    assert.equal(config.auth.password, 'from-secure-file');
    assert.equal(config.auth.username, 'lifeguard');
    assert.equal(config.regionName, 'RegionTwo');
    assert.equal(config.interface, 'internal');
    assert.equal(config.apiTimeoutSeconds, 12);
    assert.equal(config.source, `${join(dir, 'clouds.yaml')} + ${join(dir, 'secure.yaml')}`);
  });

  it('searches the directories in order and uses the first clouds.yaml found', () => {
    const first = directory({
      'clouds.yml': 'clouds:\n  one:\n    auth: {endpoint: "http://first:8774/v2.1"}\n    auth_type: none\n',
    });
    const second = directory({ 'clouds.yaml': CLOUDS });
    const config = loadCloudConfig({ env: {}, searchDirectories: [first, second] });
    assert.equal(config.name, 'one');
    assert.equal(config.authType, 'none');
    assert.equal(config.endpointOverrides.compute, 'http://first:8774/v2.1');
  });

  it('reads OS_CLIENT_CONFIG_FILE before the search directories', () => {
    const explicit = directory({ 'my-clouds.yaml': CLOUDS });
    const other = directory({
      'clouds.yaml': 'clouds:\n  other: {auth_type: none, auth: {endpoint: "http://x/v2.1"}}\n',
    });
    const config = loadCloudConfig({
      env: { OS_CLIENT_CONFIG_FILE: join(explicit, 'my-clouds.yaml'), OS_CLOUD: 'sim' },
      searchDirectories: [other],
    });
    assert.equal(config.authType, 'admin_token');
    assert.equal(config.auth.token, 'admin:admin');
    assert.deepEqual(config.endpointOverrides, {
      compute: 'http://127.0.0.1:8774/v2.1',
      image: 'http://127.0.0.1:9292',
    });
  });

  it('builds a cloud from OS_* variables when no cloud is named', () => {
    const config = loadCloudConfig({
      env: {
        OS_AUTH_URL: 'http://keystone:5000/v3',
        OS_USERNAME: 'admin',
        OS_PASSWORD: 'pw-from-env',
        OS_PROJECT_NAME: 'admin',
        OS_USER_DOMAIN_NAME: 'Default',
        OS_PROJECT_DOMAIN_NAME: 'Default',
        OS_REGION_NAME: 'RegionOne',
        OS_INTERFACE: 'internal',
      },
      searchDirectories: [],
    });
    assert.equal(config.name, 'envvars');
    assert.equal(config.source, 'environment');
    assert.equal(config.authType, 'password');
    assert.equal(config.auth.password, 'pw-from-env');
    assert.equal(config.regionName, 'RegionOne');
    assert.equal(config.interface, 'internal');
  });

  it('takes application credentials and infers v3applicationcredential', () => {
    const config = loadCloudConfig({
      env: {
        OS_AUTH_URL: 'http://keystone:5000',
        OS_APPLICATION_CREDENTIAL_ID: 'abc',
        OS_APPLICATION_CREDENTIAL_SECRET: 'shh',
      },
      searchDirectories: [],
    });
    assert.equal(config.authType, 'v3applicationcredential');
  });

  it('builds a static-token client for admin_token with explicit endpoints', async () => {
    const clients = createOpenStackClients({
      env: { OS_AUTH_TYPE: 'admin_token', OS_TOKEN: 'admin:admin', OS_ENDPOINT: 'http://127.0.0.1:1/v2.1' },
      searchDirectories: [],
    });
    assert.ok(clients.auth instanceof StaticTokenAuth);
    assert.equal(await clients.auth.token(), 'admin:admin');
    assert.equal(await clients.auth.endpoint('compute'), 'http://127.0.0.1:1/v2.1');
    await assert.rejects(clients.auth.endpoint('image'), (error: unknown) => {
      assert.ok(error instanceof CloudConfigError);
      assert.match(error.message, /image_endpoint_override/);
      return true;
    });
  });

  it('logs the configured cloud with each field once (no JSON key twice on a line)', () => {
    const lines: string[] = [];
    const logger = createLogger({
      service: 'openstack-test',
      destination: { write: (line: string) => void lines.push(line) },
    });
    createOpenStackClients({
      env: { OS_AUTH_TYPE: 'admin_token', OS_TOKEN: 'admin:admin', OS_ENDPOINT: 'http://127.0.0.1:1/v2.1' },
      searchDirectories: [],
      logger,
    });
    const line = lines.find((each) => each.includes('OpenStack cloud configured'));
    assert.ok(line, 'the cloud is logged');
    assert.equal(line.match(/"cloud":/g)?.length, 1, line);
    assert.equal(JSON.parse(line).cloud, 'envvars');
  });

  it('names the file for malformed YAML', () => {
    const dir = directory({ 'clouds.yaml': 'clouds:\n  broken: [unclosed\n' });
    const error = configError(() =>
      loadCloudConfig({ env: { OS_CLOUD: 'broken' }, searchDirectories: [dir] }),
    );
    assert.equal(error.problems[0]?.source, join(dir, 'clouds.yaml'));
    assert.match(error.message, /not valid YAML/);
  });

  it('names the key and the file for a missing auth_url', () => {
    const dir = directory({
      'clouds.yaml':
        'clouds:\n  mycloud:\n    auth:\n      username: u\n      password: p4ssw0rd-secret\n      project_name: p\n',
    });
    const error = configError(() =>
      loadCloudConfig({ env: { OS_CLOUD: 'mycloud' }, searchDirectories: [dir] }),
    );
    assert.equal(error.problems[0]?.key, 'clouds.mycloud.auth.auth_url');
    assert.equal(error.problems[0]?.source, join(dir, 'clouds.yaml'));
    assert.doesNotMatch(error.message, /p4ssw0rd-secret/);
  });

  it('names the key for a value of the wrong type, masking secrets', () => {
    const dir = directory({
      'clouds.yaml':
        'clouds:\n  typed:\n    auth:\n      auth_url: http://k:5000\n      password: [not, a, string-secret]\n',
    });
    const error = configError(() =>
      loadCloudConfig({ env: { OS_CLOUD: 'typed' }, searchDirectories: [dir] }),
    );
    assert.equal(error.problems[0]?.key, 'clouds.typed.auth.password');
    assert.equal(error.problems[0]?.value, '[REDACTED]');
    assert.doesNotMatch(error.message, /string-secret/);
  });

  it('refuses an unsupported auth type, naming the key', () => {
    const dir = directory({
      'clouds.yaml':
        'clouds:\n  odd:\n    auth_type: v3oidcpassword\n    auth: {auth_url: "http://k:5000"}\n',
    });
    const error = configError(() => loadCloudConfig({ env: { OS_CLOUD: 'odd' }, searchDirectories: [dir] }));
    assert.equal(error.problems[0]?.key, 'clouds.odd.auth_type');
    assert.match(error.message, /password, v3applicationcredential, admin_token, none/);
  });

  it('lists the defined clouds when the named one is missing', () => {
    const dir = directory({ 'clouds.yaml': CLOUDS });
    const error = configError(() =>
      loadCloudConfig({ env: { OS_CLOUD: 'staging' }, searchDirectories: [dir] }),
    );
    assert.equal(error.problems[0]?.key, 'clouds.staging');
    assert.match(error.message, /clouds defined: production, sim/);
  });

  it('names OS_ variables for problems in the environment', () => {
    const error = configError(() =>
      loadCloudConfig({
        env: { OS_AUTH_URL: 'not a url', OS_USERNAME: 'u', OS_PASSWORD: 'p', OS_PROJECT_ID: 'x' },
        searchDirectories: [],
      }),
    );
    assert.equal(error.problems[0]?.key, 'OS_AUTH_URL');
    assert.equal(error.problems[0]?.source, 'environment');
  });

  it('refuses verify: false rather than silently verifying', () => {
    const dir = directory({
      'clouds.yaml':
        'clouds:\n  insecure:\n    verify: false\n    auth_type: none\n    auth: {endpoint: "https://nova/v2.1"}\n',
    });
    const error = configError(() =>
      loadCloudConfig({ env: { OS_CLOUD: 'insecure' }, searchDirectories: [dir] }),
    );
    assert.equal(error.problems[0]?.key, 'clouds.insecure.verify');
  });

  it('explains that nothing is configured', () => {
    const error = configError(() => loadCloudConfig({ env: {}, searchDirectories: [directory({})] }));
    assert.match(error.message, /no cloud configured/);
  });
});
