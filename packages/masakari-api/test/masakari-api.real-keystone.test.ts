// The Masakari API worker as a process of its own, against the harness's real Keystone (Zed) and the
// Nova behind it, registered in the catalog as Masakari is (type instance-ha, name masakari), and
// driven by Debian's `openstack segment ...` / `openstack notification ...` (python3-masakariclient).
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { masakariNotificationJobId } from '@lifeguard/contracts';
import { bullmqPrefix } from '@lifeguard/runtime';
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
import { Queue } from 'bullmq';
import { MASAKARI_NOTIFICATION_QUEUE } from '../src/index.ts';
import { KeystoneAdmin } from './support/keystone-admin.ts';
import { type CliRun, openstack } from './support/openstack-cli.ts';

const harness = requireRealNovaVariables([
  'KEYSTONE_URL',
  'KEYSTONE_NOVA_URL',
  'RN_CLOUDS_YAML',
  'RN_COMPUTE_HOSTS',
]);
const [compute1, compute2] = harness.RN_COMPUTE_HOSTS.split(/\s+/) as [string, string];
const keystone = new KeystoneAdmin(harness.KEYSTONE_URL, process.env.RN_KEYSTONE_ADMIN_PASSWORD ?? 'admin');
const redis = testRedis();
const keyPrefix = randomKeyPrefix('masakari-api');
const region = `lg-${keyPrefix}`;
const directory = mkdtempSync(join(tmpdir(), 'masakari-api-'));
let vhost: TestVhost;
let worker: ChildProcess;
let unregister: () => Promise<void>;
let base: string;
let cli: NodeJS.ProcessEnv;
let workerLog = '';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

before(async () => {
  vhost = await createTestVhost('masakari-api');
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  unregister = await keystone.registerMasakari(region, `${base}/v1/$(project_id)s`);
  // The client's own clouds.yaml: the harness's admin, in the region of this test's endpoint.
  writeFileSync(
    join(directory, 'clouds.yaml'),
    `clouds:\n  lifeguard:\n    auth:\n      auth_url: ${harness.KEYSTONE_URL}\n      username: admin\n      password: ${process.env.RN_KEYSTONE_ADMIN_PASSWORD ?? 'admin'}\n      project_name: admin\n      user_domain_name: Default\n      project_domain_name: Default\n    region_name: ${region}\n    identity_api_version: 3\n`,
  );
  cli = {
    PATH: process.env.PATH,
    HOME: directory,
    OS_CLIENT_CONFIG_FILE: join(directory, 'clouds.yaml'),
    OS_CLOUD: 'lifeguard',
  };
  worker = spawn(process.execPath, lifeguardEntryPoint('masakari-api'), {
    env: {
      ...withoutNodeOptions(process.env),
      OS_CLIENT_CONFIG_FILE: harness.RN_CLOUDS_YAML,
      OS_CLOUD: 'real-nova',
      LIFEGUARD_AMQP_URL: vhost.url,
      LIFEGUARD_REDIS_KEY_PREFIX: keyPrefix,
      LIFEGUARD_HTTP_PORT: '0',
      LIFEGUARD_MASAKARI_API_PORT: String(port),
      LIFEGUARD_MASAKARI_API_BIND: '127.0.0.1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  worker.stdout!.on('data', (chunk: Buffer) => {
    workerLog += chunk.toString();
  });
  worker.stderr!.on('data', (chunk: Buffer) => {
    workerLog += chunk.toString();
  });
  await waitFor(
    'the Masakari API to answer',
    async () => (await fetch(`${base}/`)).status === 200,
    60_000,
    200,
  ).catch((error: Error) => {
    throw new Error(`${error.message}; the worker said:\n${workerLog}`);
  });
});

after(async () => {
  if (worker.exitCode === null) {
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.kill('SIGTERM');
    await exited;
  }
  await unregister?.();
  await deleteKeysWithPrefix(redis, keyPrefix);
  redis.disconnect();
  await vhost?.delete();
  rmSync(directory, { recursive: true, force: true });
});

const payload = JSON.stringify({ event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' });
const errorLines = (run: CliRun) => run.stderr.split('\n').filter((line) => /Exception: \d{3}/.test(line));
let notificationUuid = '';

describe('Masakari API with real Keystone, Nova and Debian’s openstack client', () => {
  it('openstack segment and segment host commands create, update, show and list, refusing an unknown compute host', async () => {
    const run = await openstack(
      [
        ['segment', 'create', 'segment-a', 'auto', 'COMPUTE', '--description', 'first', '-f', 'json'],
        ['segment', 'create', 'segment-b', 'reserved_host', 'COMPUTE', '-f', 'json'],
        [
          'segment',
          'update',
          'segment-a',
          '--description',
          'second',
          '--recovery_method',
          'rh_priority',
          '-f',
          'json',
        ],
        ['segment', 'show', 'segment-a', '-f', 'json'],
        ['segment', 'host', 'create', compute1, 'COMPUTE', 'SSH', 'segment-a', '-f', 'json'],
        [
          'segment',
          'host',
          'create',
          compute2,
          'COMPUTE',
          'SSH',
          'segment-a',
          '--reserved',
          'True',
          '-f',
          'json',
        ],
        ['segment', 'host', 'create', 'no-such-compute', 'COMPUTE', 'SSH', 'segment-a', '-f', 'json'],
        ['segment', 'host', 'list', 'segment-a', '-f', 'json'],
        [
          'notification',
          'create',
          'COMPUTE_HOST',
          compute1,
          '2026-12-07T02:00:00.000',
          payload,
          '-f',
          'json',
        ],
        [
          'notification',
          'create',
          'COMPUTE_HOST',
          compute1,
          '2026-12-07T02:00:30.000',
          payload,
          '-f',
          'json',
        ],
        [
          'notification',
          'create',
          'COMPUTE_HOST',
          'no-such-host',
          '2026-12-07T02:00:00.000',
          payload,
          '-f',
          'json',
        ],
      ],
      cli,
    );
    const [created, createdB, updated, shown, host1, host2, hosts, notification] = run.documents as Array<
      Record<string, unknown>
    >;
    assert.equal(run.documents.length, 8, `${run.stdout}\n${run.stderr}`);
    assert.equal(created!.name, 'segment-a');
    assert.equal(created!.is_enabled, true);
    assert.equal(typeof created!.id, 'number');
    assert.equal(createdB!.recovery_method, 'reserved_host');
    assert.equal(updated!.description, 'second');
    assert.deepEqual(
      [shown!.uuid, shown!.recovery_method, shown!.description],
      [created!.uuid, 'rh_priority', 'second'],
    );
    assert.match(String(shown!.updated_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/);
    assert.deepEqual(
      [host1!.name, host1!.reserved, host1!.failover_segment_id],
      [compute1, false, created!.uuid],
    );
    assert.equal(host2!.reserved, true);
    assert.deepEqual(
      (hosts as unknown as Array<{ name: string }>).map((host) => host.name).sort(),
      [compute1, compute2].sort(),
    );
    assert.equal(notification!.status, 'new');
    assert.equal(notification!.source_host_uuid, host1!.uuid);
    assert.deepEqual(notification!.recovery_workflow_details, []);
    notificationUuid = notification!.notification_uuid as string;
    assert.deepEqual(errorLines(run), [
      `BadRequestException: 400: Client Error for url: ${base}/v1/${(await keystone.admin()).projectId}/segments/${created!.uuid}/hosts, Compute service with name no-such-compute could not be found.`,
      `ConflictException: 409: Client Error for url: ${base}/v1/${(await keystone.admin()).projectId}/notifications, Notification received from host ${compute1} of type COMPUTE_HOST is duplicate.`,
      `BadRequestException: 400: Client Error for url: ${base}/v1/${(await keystone.admin()).projectId}/notifications, Host with name no-such-host could not be found.`,
    ]);
  });

  it('openstack notification show and list, segment delete; the accepted notification’s job is on the queue', async () => {
    assert.notEqual(notificationUuid, '');
    const run = await openstack(
      [
        ['notification', 'show', notificationUuid, '-f', 'json'],
        ['notification', 'list', '-f', 'json'],
        ['segment', 'delete', 'segment-b'],
        ['segment', 'list', '-f', 'json'],
      ],
      cli,
    );
    const [shown, listed, segments] = run.documents as [
      Record<string, unknown>,
      Array<Record<string, unknown>>,
      Array<Record<string, unknown>>,
    ];
    assert.equal(run.documents.length, 3, `${run.stdout}\n${run.stderr}`);
    assert.deepEqual(
      [shown.notification_uuid, shown.type, shown.generated_time],
      [notificationUuid, 'COMPUTE_HOST', '2026-12-07T02:00:00.000000'],
    );
    assert.deepEqual(
      listed.map((item) => item.notification_uuid),
      [notificationUuid],
    );
    assert.deepEqual(
      segments.map((segment) => segment.name),
      ['segment-a'],
    );
    const queue = new Queue(MASAKARI_NOTIFICATION_QUEUE, {
      connection: redis,
      prefix: bullmqPrefix(keyPrefix),
    });
    try {
      const job = await queue.getJob(masakariNotificationJobId(notificationUuid));
      assert.deepEqual(job?.data, { notificationUuid });
    } finally {
      await queue.close();
    }
  });

  it('answers as keystonemiddleware and Masakari’s policy do: 401 without a valid token, 403 without the admin role', async () => {
    const noToken = await fetch(`${base}/v1/segments`);
    assert.equal(noToken.status, 401);
    assert.equal(noToken.headers.get('www-authenticate'), `Keystone uri="${harness.KEYSTONE_URL}"`);
    assert.deepEqual(await noToken.json(), {
      error: {
        code: 401,
        title: 'Unauthorized',
        message: 'The request you have made requires authentication.',
      },
    });
    assert.equal(
      (await fetch(`${base}/v1/segments`, { headers: { 'X-Auth-Token': 'gAAAAAnot-a-token' } })).status,
      401,
    );
    const member = await keystone.memberUser(`lg-member-${keyPrefix}`);
    try {
      const refused = await fetch(`${base}/v1/segments`, { headers: { 'X-Auth-Token': member.token } });
      assert.deepEqual(await refused.json(), {
        forbidden: {
          code: 403,
          message: "Policy doesn't allow os_masakari_api:segments:index to be performed.",
        },
      });
    } finally {
      await member.remove();
    }
  });

  it('bad input gets Masakari’s answer and changes nothing; of a flood of duplicates exactly one is accepted', async () => {
    const { token } = await keystone.admin();
    const post = (body: string) =>
      fetch(`${base}/v1/notifications`, {
        method: 'POST',
        headers: { 'X-Auth-Token': token, 'Content-Type': 'application/json' },
        body,
      });
    const count = async () =>
      (
        (await (await fetch(`${base}/v1/notifications`, { headers: { 'X-Auth-Token': token } })).json()) as {
          notifications: unknown[];
        }
      ).notifications.length;
    const before = await count();
    const malformed = await post('{"notification": {');
    assert.deepEqual(
      [malformed.status, await malformed.json()],
      [400, { badRequest: { code: 400, message: 'Malformed request body' } }],
    );
    const unknownType = await post(
      JSON.stringify({
        notification: {
          type: 'DISK',
          hostname: compute1,
          generated_time: '2026-12-07T03:00:00',
          payload: {},
        },
      }),
    );
    assert.deepEqual(await unknownType.json(), {
      badRequest: {
        code: 400,
        message:
          "Invalid input for field/attribute type. Value: DISK. 'DISK' is not one of ('COMPUTE_HOST', 'VM', 'PROCESS')",
      },
    });
    assert.equal(await count(), before);
    const flood = JSON.stringify({
      notification: {
        type: 'PROCESS',
        hostname: compute1,
        generated_time: '2026-12-07T03:00:00',
        payload: { process_name: 'nova-compute', event: 'STOPPED' },
      },
    });
    const statuses = await Promise.all(Array.from({ length: 20 }, async () => (await post(flood)).status));
    assert.deepEqual(statuses.filter((status) => status === 202).length, 1, statuses.join(' '));
    assert.deepEqual(statuses.filter((status) => status === 409).length, 19, statuses.join(' '));
    assert.equal(await count(), before + 1);
  });
});
