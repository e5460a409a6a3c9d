// What Masakari's own monitors need to drive lifeguard, for the tests that run them: lifeguard's
// Masakari API (registered in the real-Nova harness's Keystone catalog as type instance-ha under a
// region of the test's own), the Masakari engine and the instance restart worker, each a process of its
// own on the harness's Nova, the test's Redis prefix and vhost; a segment with two compute hosts of the
// harness; a guest with HA_Enabled=True booted on the first. A monitor runs in a UTS namespace named
// after a compute host, since the monitors report `socket.gethostname()`.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { MasakariStore, type NotificationRecord } from '@lifeguard/masakari-api';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  lifeguardEntryPoint,
  randomKeyPrefix,
  requireRealNovaVariables,
  type TestVhost,
  testRedis,
  waitFor,
  withoutNodeOptions,
} from '@lifeguard/testing';
import { KeystoneAdmin } from '../../../masakari-api/test/support/keystone-admin.ts';
import { openstack } from '../../../masakari-api/test/support/openstack-cli.ts';
import { realNova } from '../../../node-monitor/test/support/real-nova.ts';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Registers the stack's `before` (everything started, the segment created, the guest booting) and
 * `after` (every process stopped, the guest deleted, the region, keys and vhost removed) hooks.
 */
export function masakariMonitorsStack(name: string) {
  const harness = requireRealNovaVariables(['KEYSTONE_URL', 'RN_CLOUDS_YAML', 'RN_COMPUTE_HOSTS']);
  const password = process.env.RN_KEYSTONE_ADMIN_PASSWORD ?? 'admin';
  const keystone = new KeystoneAdmin(harness.KEYSTONE_URL, password);
  const cloud = realNova();
  const redis = testRedis();
  const keyPrefix = randomKeyPrefix(name);
  const region = `lg-${keyPrefix}`;
  const directory = mkdtempSync(join(tmpdir(), `${name}-`));
  const children: Array<{ name: string; child: ChildProcess; log: string[] }> = [];
  const state: { vhost?: TestVhost; unregister?: () => Promise<void>; guest?: Promise<string> } = {};
  const cli: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: directory,
    OS_CLIENT_CONFIG_FILE: join(directory, 'clouds.yaml'),
    OS_CLOUD: 'lifeguard',
  };

  /** Starts a process whose output is kept (and shown when a wait fails). */
  function start(name: string, command: string, args: string[], env: NodeJS.ProcessEnv) {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const log: string[] = [];
    const keep = (chunk: Buffer) => log.push(chunk.toString());
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    children.push({ name, child, log });
    return { child, log };
  }
  const logs = () => children.map(({ name, log }) => `--- ${name}\n${log.join('').slice(-3000)}`).join('\n');
  const withLogs = (error: Error): never => {
    throw new Error(`${error.message}\n${logs()}`);
  };

  /** The lifeguard worker `name` on the harness's Keystone and Nova, this test's Redis prefix and vhost. */
  function startWorker(name: string, env: Record<string, string>): void {
    start(name, process.execPath, lifeguardEntryPoint(name), {
      ...withoutNodeOptions(process.env),
      OS_CLIENT_CONFIG_FILE: harness.RN_CLOUDS_YAML,
      OS_CLOUD: 'real-nova',
      INSTANCEHA_CONFIG_PATH: join(directory, 'config.yaml'),
      LIFEGUARD_AMQP_URL: state.vhost!.url,
      LIFEGUARD_REDIS_KEY_PREFIX: keyPrefix,
      LIFEGUARD_HTTP_PORT: '0',
      ...env,
    });
  }

  const stack = {
    harness,
    cloud,
    redis,
    keyPrefix,
    region,
    directory,
    cli,
    start,
    logs,
    /** The host the monitor under test reports (the last compute host of the harness). */
    host: cloud.hosts.at(-1)!,
    /** The host of the guest that crashes. */
    guestHost: cloud.hosts[0]!,
    /** The guest's server id, once it is booted with HA_Enabled=True. */
    guest: () => state.guest!,
    store: () => new MasakariStore({ redis, keyPrefix }),
    notifications: () => stack.store().listNotifications(),
    /** The notification matching `match`, once its status is final. */
    finished: (what: string, match: (record: NotificationRecord) => boolean) =>
      waitFor(
        `${what} processed`,
        async () =>
          (await stack.notifications()).find(
            (each) => match(each) && ['finished', 'ignored', 'failed', 'error'].includes(each.status),
          ),
        90_000,
        200,
      ).catch(withLogs),
    /** A masakarimonitors.conf whose [api] section posts as the harness's admin to this region. */
    writeMonitorConfig(file: string, sections: ReadonlyArray<string>): string {
      const path = join(directory, file);
      const api = [
        '[api]',
        `region = ${region}`,
        'auth_type = password',
        `auth_url = ${harness.KEYSTONE_URL}`,
        'username = admin',
        `password = ${password}`,
        'project_name = admin',
        'user_domain_name = Default',
        'project_domain_name = Default',
      ];
      writeFileSync(path, ['[DEFAULT]', ...api, ...sections, ''].join('\n'));
      return path;
    },
    /** Debian's monitor `program` in a UTS namespace whose hostname is `host`; its log lines. */
    startMonitor(program: string, host: string, config: string): string[] {
      const script = `hostname ${host} && exec ${program} --config-file ${config}`;
      return start(program, 'unshare', ['--uts', '/bin/sh', '-c', script], {
        PATH: process.env.PATH,
        HOME: directory,
      }).log;
    },
  };

  before(async () => {
    state.vhost = await createTestVhost(name);
    await cloud.restore();
    // The guest boots while the workers start.
    state.guest = cloud.boot(`${name}-guest`, stack.guestHost).then(async (id) => {
      const metadata = await cloud.nova('PUT', `/servers/${id}/metadata/HA_Enabled`, {
        meta: { HA_Enabled: 'True' },
      });
      assert.equal(metadata.status, 200, JSON.stringify(metadata.body));
      return id;
    });
    state.guest.catch(() => undefined);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    state.unregister = await keystone.registerMasakari(region, `${base}/v1/$(project_id)s`);
    const auth = `auth_url: ${harness.KEYSTONE_URL}\n      username: admin\n      password: ${password}\n      project_name: admin\n      user_domain_name: Default\n      project_domain_name: Default`;
    writeFileSync(
      join(directory, 'clouds.yaml'),
      `clouds:\n  lifeguard:\n    auth:\n      ${auth}\n    region_name: ${region}\n    identity_api_version: 3\n`,
    );
    writeFileSync(join(directory, 'config.yaml'), 'config:\n  POLL: 15\n');
    // No duplicate window: the tests send the same payloads more than once.
    startWorker('masakari-api', {
      LIFEGUARD_MASAKARI_API_PORT: String(port),
      LIFEGUARD_MASAKARI_API_BIND: '127.0.0.1',
      LIFEGUARD_MASAKARI_DUPLICATE_SECONDS: '0',
    });
    startWorker('masakari-engine', { LIFEGUARD_MASAKARI_WATCH_SECONDS: '0.2' });
    startWorker('instance-restart-worker', { LIFEGUARD_INSTANCE_RESTART_POLL_SECONDS: '0.2' });
    await waitFor(
      'the Masakari API to answer',
      async () => (await fetch(`${base}/`).catch(() => null))?.status === 200,
      60_000,
      200,
    ).catch(withLogs);
    const setup = await openstack(
      [
        ['segment', 'create', 'segment-monitors', 'auto', 'COMPUTE', '-f', 'json'],
        ['segment', 'host', 'create', stack.host, 'COMPUTE', 'SSH', 'segment-monitors', '-f', 'json'],
        ['segment', 'host', 'create', stack.guestHost, 'COMPUTE', 'SSH', 'segment-monitors', '-f', 'json'],
      ],
      cli,
    );
    assert.equal(setup.documents.length, 3, setup.stderr);
  });

  after(async () => {
    for (const { child } of children.reverse()) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    const guest = state.guest?.then((id) => [id]).catch(() => []) ?? [];
    await cloud.restoreHostsAndDelete(await guest);
    await state.unregister?.();
    await deleteKeysWithPrefix(redis, keyPrefix);
    redis.disconnect();
    await state.vhost?.delete();
    rmSync(directory, { recursive: true, force: true });
  });

  return stack;
}
