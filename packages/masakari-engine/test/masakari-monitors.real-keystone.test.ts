// Masakari's own monitor driving lifeguard: Debian's masakari-processmonitor watches a process named
// nova-compute that the test starts and kills, and posts its PROCESS notification through
// openstacksdk, with a Keystone token of the real-Nova harness, to lifeguard's Masakari API (registered
// in the catalog as type instance-ha); the Masakari engine, as a process of its own, disables the
// host's compute service in Nova. Debian's `openstack notification create` then sends the STARTED that
// enables it again. The monitor reports `socket.gethostname()`, so it runs in a UTS namespace named
// after the harness's compute host.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseDisabledReason } from '@lifeguard/instance-ha';
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
import { KeystoneAdmin } from '../../masakari-api/test/support/keystone-admin.ts';
import { openstack } from '../../masakari-api/test/support/openstack-cli.ts';
import { realNova } from '../../node-monitor/test/support/real-nova.ts';

const harness = requireRealNovaVariables(['KEYSTONE_URL', 'RN_CLOUDS_YAML', 'RN_COMPUTE_HOSTS']);
const password = process.env.RN_KEYSTONE_ADMIN_PASSWORD ?? 'admin';
const keystone = new KeystoneAdmin(harness.KEYSTONE_URL, password);
const cloud = realNova();
const host = cloud.hosts.at(-1)!;
/** The host of the guest that crashes. */
const guestHost = cloud.hosts[0]!;
let guest: Promise<string>;
const redis = testRedis();
const keyPrefix = randomKeyPrefix('masakari-monitors');
const region = `lg-${keyPrefix}`;
const directory = mkdtempSync(join(tmpdir(), 'masakari-monitors-'));
const children: Array<{ name: string; child: ChildProcess; log: string[] }> = [];
let vhost: TestVhost;
let unregister: () => Promise<void>;
let cli: NodeJS.ProcessEnv;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts a process whose output is kept (and shown when a wait fails). */
function start(name: string, command: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const log: string[] = [];
  const keep = (chunk: Buffer) => log.push(chunk.toString());
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  children.push({ name, child, log });
  return child;
}
const logs = () => children.map(({ name, log }) => `--- ${name}\n${log.join('').slice(-3000)}`).join('\n');

/** The lifeguard worker `name` on the harness's Keystone and Nova, this test's Redis prefix and vhost. */
function startWorker(name: string, env: Record<string, string>): void {
  start(name, process.execPath, lifeguardEntryPoint(name), {
    ...withoutNodeOptions(process.env),
    OS_CLIENT_CONFIG_FILE: harness.RN_CLOUDS_YAML,
    OS_CLOUD: 'real-nova',
    INSTANCEHA_CONFIG_PATH: join(directory, 'config.yaml'),
    LIFEGUARD_AMQP_URL: vhost.url,
    LIFEGUARD_REDIS_KEY_PREFIX: keyPrefix,
    LIFEGUARD_HTTP_PORT: '0',
    ...env,
  });
}

before(async () => {
  vhost = await createTestVhost('masakari-monitors');
  await cloud.restore();
  // The guest boots while the workers start.
  guest = cloud.boot('masakari-guest', guestHost).then(async (id) => {
    const metadata = await cloud.nova('PUT', `/servers/${id}/metadata/HA_Enabled`, {
      meta: { HA_Enabled: 'True' },
    });
    assert.equal(metadata.status, 200, JSON.stringify(metadata.body));
    return id;
  });
  guest.catch(() => undefined);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  unregister = await keystone.registerMasakari(region, `${base}/v1/$(project_id)s`);
  const auth = `auth_url: ${harness.KEYSTONE_URL}\n      username: admin\n      password: ${password}\n      project_name: admin\n      user_domain_name: Default\n      project_domain_name: Default`;
  writeFileSync(
    join(directory, 'clouds.yaml'),
    `clouds:\n  lifeguard:\n    auth:\n      ${auth}\n    region_name: ${region}\n    identity_api_version: 3\n`,
  );
  writeFileSync(join(directory, 'config.yaml'), 'config:\n  POLL: 15\n');
  cli = {
    PATH: process.env.PATH,
    HOME: directory,
    OS_CLIENT_CONFIG_FILE: join(directory, 'clouds.yaml'),
    OS_CLOUD: 'lifeguard',
  };
  // No duplicate window: the test sends the same PROCESS payloads more than once.
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
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n${logs()}`);
  });
  const setup = await openstack(
    [
      ['segment', 'create', 'segment-monitors', 'auto', 'COMPUTE', '-f', 'json'],
      ['segment', 'host', 'create', host, 'COMPUTE', 'SSH', 'segment-monitors', '-f', 'json'],
      ['segment', 'host', 'create', guestHost, 'COMPUTE', 'SSH', 'segment-monitors', '-f', 'json'],
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
  await cloud.restoreHostsAndDelete(await guest.then((id) => [id]).catch(() => []));
  await unregister?.();
  await deleteKeysWithPrefix(redis, keyPrefix);
  redis.disconnect();
  await vhost?.delete();
  rmSync(directory, { recursive: true, force: true });
});

/** The notification whose payload has `event`, once its status is final. */
const finished = (event: string) =>
  waitFor(
    `a notification with event ${event} processed`,
    async () => {
      const all = await new MasakariStore({ redis, keyPrefix }).listNotifications();
      return all.find(
        (each: NotificationRecord) =>
          each.payload.event === event && ['finished', 'ignored', 'failed', 'error'].includes(each.status),
      );
    },
    90_000,
    200,
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n${logs()}`);
  });

describe('Masakari processmonitor → lifeguard Masakari API → Masakari engine → Nova', () => {
  it('nova-compute stopped: the monitor reports it and the compute service is disabled; a STARTED from openstack notification create enables it', async () => {
    // The watched "nova-compute": a process of its own, found by its path in `ps -ef`.
    const watched = join(directory, 'nova-compute');
    writeFileSync(watched, '#!/bin/sh\nexec sleep 3600\n');
    chmodSync(watched, 0o755);
    const process_ = start('nova-compute', '/bin/sh', [watched], { PATH: process.env.PATH });
    writeFileSync(
      join(directory, 'process_list.yaml'),
      `-\n    process_name: ${watched}\n    start_command: /bin/true\n    pre_start_command:\n    post_start_command:\n    restart_command: /bin/false\n    pre_restart_command:\n    post_restart_command:\n    run_as_root: False\n`,
    );
    writeFileSync(
      join(directory, 'masakarimonitors.conf'),
      [
        '[DEFAULT]',
        '[api]',
        `region = ${region}`,
        'auth_type = password',
        `auth_url = ${harness.KEYSTONE_URL}`,
        'username = admin',
        `password = ${password}`,
        'project_name = admin',
        'user_domain_name = Default',
        'project_domain_name = Default',
        '[process]',
        'check_interval = 1',
        'restart_retries = 0',
        'restart_interval = 1',
        'api_retry_max = 5',
        'api_retry_interval = 2',
        `process_list_path = ${join(directory, 'process_list.yaml')}`,
        '',
      ].join('\n'),
    );
    start(
      'masakari-processmonitor',
      'unshare',
      [
        '--uts',
        '/bin/sh',
        '-c',
        `hostname ${host} && exec masakari-processmonitor --config-file ${join(directory, 'masakarimonitors.conf')}`,
      ],
      { PATH: process.env.PATH, HOME: directory },
    );
    const monitorLog = children.at(-1)!.log;
    await waitFor(
      'the monitor to find the process',
      () => /is found|Start of process/.test(monitorLog.join('')),
      60_000,
      200,
    ).catch(() => undefined);
    process_.kill('SIGKILL');

    const stopped = await finished('STOPPED');
    assert.equal(stopped.type, 'PROCESS');
    assert.deepEqual(stopped.payload, { event: 'STOPPED', process_name: 'nova-compute' });
    assert.equal(stopped.status, 'finished', JSON.stringify(stopped.recoveryWorkflowDetails));
    const disabled = await cloud.service(host);
    const marker = parseDisabledReason(disabled.disabled_reason);
    assert.deepEqual(
      [disabled.status, marker.kind, marker.origin],
      ['disabled', 'process-stopped', 'lifeguard'],
    );
    assert.equal(disabled.forced_down, false, 'nothing fenced');

    const sent = await openstack(
      [
        [
          'notification',
          'create',
          'PROCESS',
          host,
          new Date().toISOString().replace('Z', ''),
          JSON.stringify({ event: 'STARTED', process_name: 'nova-compute' }),
          '-f',
          'json',
        ],
      ],
      cli,
    );
    assert.equal(sent.documents.length, 1, sent.stderr);
    const started = await finished('STARTED');
    assert.equal(started.status, 'finished');
    assert.equal((await cloud.service(host)).status, 'enabled');
  });

  it('a compute service an operator disabled is neither marked on STOPPED nor enabled on STARTED', async () => {
    await cloud.updateService(host, { status: 'disabled', disabled_reason: 'maintenance window' });
    const known = new Set(
      (await new MasakariStore({ redis, keyPrefix }).listNotifications()).map((each) => each.id),
    );
    const time = () => new Date().toISOString().replace('Z', '');
    const sent = await openstack(
      ['STOPPED', 'STARTED'].map((event) => [
        'notification',
        'create',
        'PROCESS',
        host,
        time(),
        JSON.stringify({ event, process_name: 'nova-compute' }),
        '-f',
        'json',
      ]),
      cli,
    );
    assert.equal(sent.documents.length, 2, sent.stderr);
    for (const event of ['STOPPED', 'STARTED']) {
      const record = await waitFor(
        `the operator case's ${event} processed`,
        async () =>
          (await new MasakariStore({ redis, keyPrefix }).listNotifications()).find(
            (each) => !known.has(each.id) && each.payload.event === event && each.status === 'finished',
          ),
        90_000,
        200,
      );
      assert.equal(record.recoveryWorkflowDetails[0]?.state, 'SKIPPED');
    }
    const after = await cloud.service(host);
    assert.deepEqual([after.status, after.disabled_reason], ['disabled', 'maintenance window']);
    await cloud.updateService(host, { status: 'enabled' });
  });

  it('a crashed guest: the VM notification (instancemonitor body) through openstack notification create gets it ACTIVE again', async (t) => {
    const id = await guest;
    const reset = await cloud.nova('POST', `/servers/${id}/action`, { 'os-resetState': { state: 'error' } });
    assert.equal(reset.status, 202);
    const crashedAt = Date.now();
    // masakari-instancemonitor's payload for a guest that crashed (eventfilter_table: LIFECYCLE, STOPPED_FAILED).
    const payload = { event: 'LIFECYCLE', instance_uuid: id, vir_domain_event: 'STOPPED_FAILED' };
    const sent = await openstack(
      [
        [
          'notification',
          'create',
          'VM',
          guestHost,
          new Date().toISOString().replace('Z', ''),
          JSON.stringify(payload),
          '-f',
          'json',
        ],
      ],
      cli,
    );
    assert.equal(sent.documents.length, 1, sent.stderr);
    const record = await finished('LIFECYCLE');
    assert.equal(record.status, 'finished', JSON.stringify(record.recoveryWorkflowDetails));
    assert.deepEqual(
      record.recoveryWorkflowDetails.map((detail) => [detail.name, detail.state]),
      [['InstanceRestartTask', 'SUCCESS']],
    );
    assert.equal((await cloud.server(id)).status, 'ACTIVE');
    t.diagnostic(
      `guest crash → notification finished, guest ACTIVE: ${Date.now() - crashedAt} ms (load ${loadavg()[0]!.toFixed(1)})`,
    );
  });
});
