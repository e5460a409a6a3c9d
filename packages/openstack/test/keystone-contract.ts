import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '@lifeguard/runtime';
import { CapturedLines } from '@lifeguard/testing';
import { createOpenStackClients, KeystoneAuth, KeystoneAuthError } from '../src/index.ts';

/** A Keystone v3 (and the Nova behind it) for the Keystone contract: real (harness) or cloud-sim. */
export interface KeystoneTarget {
  label: string;
  /** `http://host:port/v3` or `.../identity/v3`. */
  authUrl: string;
  /** The compute endpoint the catalog must give (public interface). */
  computeUrl: string;
  region: string;
  adminPassword: string;
  /** The compute hosts Nova lists. */
  hosts: string[];
  close(): Promise<void>;
}

/** A password-scoped token and the user id, straight from Keystone (for creating application credentials). */
async function adminToken(target: KeystoneTarget): Promise<{ token: string; userId: string }> {
  const response = await fetch(`${target.authUrl}/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { name: 'admin', domain: { id: 'default' }, password: target.adminPassword } },
        },
        scope: { project: { name: 'admin', domain: { id: 'default' } } },
      },
    }),
  });
  assert.equal(response.status, 201);
  const body = (await response.json()) as { token: { user: { id: string } } };
  return { token: response.headers.get('x-subject-token')!, userId: body.token.user.id };
}

/**
 * The contract of KeystoneAuth (password and application credentials, catalog endpoint selection,
 * errors without secrets), run unchanged against the harness's real Keystone and cloud-sim's subset.
 */
export function keystoneContract(createTarget: () => Promise<KeystoneTarget>): void {
  describe('Keystone v3 contract', { timeout: 120_000 }, () => {
    let target: KeystoneTarget;
    const directory = mkdtempSync(join(tmpdir(), 'lifeguard-keystone-'));

    before(async () => {
      target = await createTarget();
    });
    after(async () => {
      rmSync(directory, { recursive: true, force: true });
      await target?.close();
    });

    /** OS_* variables of the admin user scoped to the admin project (Default domain). */
    const adminEnvironment = () => ({
      OS_AUTH_URL: target.authUrl,
      OS_USERNAME: 'admin',
      OS_PASSWORD: target.adminPassword,
      OS_PROJECT_NAME: 'admin',
      OS_USER_DOMAIN_NAME: 'Default',
      OS_PROJECT_DOMAIN_NAME: 'Default',
    });

    it('authenticates with a password from clouds.yaml + secure.yaml and reaches Nova through the catalog', async () => {
      writeFileSync(
        join(directory, 'clouds.yaml'),
        `clouds:\n  lab:\n    auth:\n      auth_url: ${target.authUrl}\n      username: admin\n      project_name: admin\n      user_domain_name: Default\n      project_domain_name: Default\n    region_name: ${target.region}\n    interface: public\n    identity_api_version: 3\n`,
      );
      writeFileSync(
        join(directory, 'secure.yaml'),
        `clouds:\n  lab:\n    auth:\n      password: ${target.adminPassword}\n`,
      );
      const clients = createOpenStackClients({ env: { OS_CLOUD: 'lab' }, searchDirectories: [directory] });
      assert.ok(clients.auth instanceof KeystoneAuth);
      assert.equal(await clients.auth.endpoint('compute'), target.computeUrl);
      const services = await clients.compute.listServices({ binary: 'nova-compute' });
      assert.deepEqual(services.map((service) => service.host).sort(), [...target.hosts].sort());
      assert.equal(await clients.compute.microversion(), '2.73');
      assert.equal(clients.auth.tokensIssued, 1, 'one token serves every call');
      assert.match((await clients.auth.projectId()) ?? '', /^[0-9a-f]{32}$/);
    });

    it("looks up a project by name through the catalog's identity endpoint (SKIP_SERVERS_IN_PROJECT)", async () => {
      const clients = createOpenStackClients({ env: adminEnvironment(), searchDirectories: [] });
      assert.ok(clients.auth instanceof KeystoneAuth);
      const admin = await clients.identity.projectsNamed('admin');
      assert.deepEqual(
        admin.map((project) => project.id),
        [await clients.auth.projectId()],
      );
      assert.equal(admin[0]?.name, 'admin');
      assert.deepEqual(await clients.identity.projectsNamed(`no-such-project-${randomUUID()}`), []);
    });

    it('selects the endpoint by interface and region, and names what the catalog has when none matches', async () => {
      const internal = createOpenStackClients({
        env: { ...adminEnvironment(), OS_INTERFACE: 'internal', OS_REGION_NAME: target.region },
        searchDirectories: [],
      });
      assert.equal(await internal.auth.endpoint('compute'), target.computeUrl);
      const elsewhere = createOpenStackClients({
        env: {
          OS_AUTH_URL: target.authUrl,
          OS_USERNAME: 'admin',
          OS_PASSWORD: target.adminPassword,
          OS_PROJECT_NAME: 'admin',
          OS_REGION_NAME: 'Nowhere',
        },
        searchDirectories: [],
      });
      await assert.rejects(elsewhere.compute.listServices(), (error: unknown) => {
        assert.ok(error instanceof KeystoneAuthError, String(error));
        assert.match(
          error.message,
          /no compute endpoint with interface public in region Nowhere; it has .*compute \([^)]*public RegionOne/,
        );
        return true;
      });
    });

    it('refuses a wrong password with KeystoneAuthError 401, the password in neither the error nor the logs', async () => {
      const lines = new CapturedLines();
      const password = `wrong-${randomUUID()}`;
      const clients = createOpenStackClients({
        env: {
          OS_AUTH_URL: target.authUrl,
          OS_USERNAME: 'admin',
          OS_PASSWORD: password,
          OS_PROJECT_NAME: 'admin',
        },
        searchDirectories: [],
        logger: createLogger({ service: 'test', level: 'debug', destination: lines }),
      });
      const error = await clients.compute.listServices().then(
        () => assert.fail('expected KeystoneAuthError'),
        (caught: unknown) => caught,
      );
      assert.ok(error instanceof KeystoneAuthError, String(error));
      assert.equal(error.status, 401);
      assert.match(
        error.message,
        /^Keystone authentication \(password\) at .* failed with HTTP 401: The request you have made requires authentication\./,
      );
      assert.doesNotMatch(error.message, new RegExp(password));
      assert.ok(lines.lines.length > 0);
      assert.doesNotMatch(lines.text, new RegExp(password));
    });

    it('authenticates with an application credential, by id and by name, never logging its secret or the token', async () => {
      const { token, userId } = await adminToken(target);
      const name = `lifeguard-${randomUUID().slice(0, 8)}`;
      const created = await fetch(`${target.authUrl}/users/${userId}/application_credentials`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-auth-token': token },
        body: JSON.stringify({ application_credential: { name } }),
      });
      assert.equal(created.status, 201, await created.clone().text());
      const credential = (
        (await created.json()) as { application_credential: { id: string; secret: string } }
      ).application_credential;
      const lines = new CapturedLines();
      const byId = createOpenStackClients({
        env: {
          OS_AUTH_TYPE: 'v3applicationcredential',
          OS_AUTH_URL: target.authUrl,
          OS_APPLICATION_CREDENTIAL_ID: credential.id,
          OS_APPLICATION_CREDENTIAL_SECRET: credential.secret,
        },
        searchDirectories: [],
        logger: createLogger({ service: 'test', level: 'debug', destination: lines }),
      });
      assert.equal((await byId.compute.listServices({ binary: 'nova-compute' })).length, target.hosts.length);
      const issued = await byId.auth.token();
      assert.ok(issued);
      assert.ok(!lines.text.includes(credential.secret), 'the secret is never logged');
      assert.ok(!lines.text.includes(issued), 'the token is never logged');
      const byName = createOpenStackClients({
        env: {
          OS_AUTH_URL: target.authUrl,
          OS_APPLICATION_CREDENTIAL_NAME: name,
          OS_APPLICATION_CREDENTIAL_SECRET: credential.secret,
          OS_USERNAME: 'admin',
          OS_USER_DOMAIN_NAME: 'Default',
        },
        searchDirectories: [],
      });
      assert.equal(byName.config.authType, 'v3applicationcredential');
      assert.equal(
        (await byName.compute.listServices({ binary: 'nova-compute' })).length,
        target.hosts.length,
      );
      const wrong = createOpenStackClients({
        env: {
          OS_AUTH_URL: target.authUrl,
          OS_APPLICATION_CREDENTIAL_ID: credential.id,
          OS_APPLICATION_CREDENTIAL_SECRET: 'not-the-secret',
        },
        searchDirectories: [],
      });
      await assert.rejects(
        wrong.compute.listServices(),
        (error: unknown) => error instanceof KeystoneAuthError && error.status === 401,
      );
    });
  });
}
