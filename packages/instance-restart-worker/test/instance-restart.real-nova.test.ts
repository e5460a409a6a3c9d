import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  INSTANCE_RESTART_JOB_OPTIONS,
  type InstanceRestartJob,
  type InstanceRestartOutcome,
  instanceRestartJobId,
  JOB_NAMES,
  JOB_QUEUES,
} from '@lifeguard/contracts';
import { type CloudConfig, createOpenStackClients, type NovaClient } from '@lifeguard/openstack';
import { bullmqPrefix, connectRedis, createLogger, createMetricsRegistry } from '@lifeguard/runtime';
import {
  CapturedLines,
  deleteKeysWithPrefix,
  REDIS_URL,
  randomKeyPrefix,
  requireRealNovaVariables,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { InstanceRestartWorker, loadInstanceRestartSettings } from '../src/index.ts';
import { RecordedEvents } from './support/recorded-events.ts';

const prefix = randomKeyPrefix('instance-restart-real-nova');
const events = new RecordedEvents();
const logs = new CapturedLines();
let nova: NovaClient;
let redis: Redis;
let queue: Queue;
let worker: InstanceRestartWorker;
let novaUrl: string;
let token: string;
let serverId: string;
/** The rule's clock: real time shifted by `clockOffset` (the hour of restarts is judged on it). */
let clockOffset = 0;
const now = () => new Date(Date.now() + clockOffset);
const MINUTE = 60_000;

async function novaCall(method: string, path: string, body?: unknown) {
  const response = await fetch(`${novaUrl}${path}`, {
    method,
    headers: {
      'x-auth-token': token,
      'x-openstack-nova-api-version': '2.74',
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

const status = async () => (await nova.getServer(serverId)).status;

/** The guest "crashes": Nova is told its server is in error, behind the guest's back (the fake driver has no guest to kill). */
async function crash(): Promise<Date> {
  const answer = await novaCall('POST', `/servers/${serverId}/action`, {
    'os-resetState': { state: 'error' },
  });
  assert.equal(answer.status, 202, JSON.stringify(answer.body));
  assert.equal(await status(), 'ERROR');
  return new Date();
}

/** Adds the job a Masakari VM notification leads to, and waits for its outcome. */
async function restartJob(
  notificationUuid: string,
): Promise<{ outcome: InstanceRestartOutcome; jobId: string }> {
  const data: InstanceRestartJob = {
    instanceId: serverId,
    host: (await nova.getServer(serverId))['OS-EXT-SRV-ATTR:host'] ?? 'unknown',
    failure: { source: 'masakari-notification', event: 'LIFECYCLE', virDomainEvent: 'STOPPED_FAILED' },
    notificationUuid,
    observedAt: new Date(now().getTime() - 1000).toISOString(),
  };
  const jobId = instanceRestartJobId(serverId, notificationUuid);
  await queue.add(JOB_NAMES.instanceRestart, data, { ...INSTANCE_RESTART_JOB_OPTIONS, jobId });
  let outcome: InstanceRestartOutcome | undefined;
  await waitFor(
    `job ${jobId} completed`,
    async () => {
      const job = await queue.getJob(jobId);
      outcome = (await job?.isCompleted()) ? (job?.returnvalue as InstanceRestartOutcome) : undefined;
      return outcome !== undefined;
    },
    120_000,
    100,
  );
  return { outcome: outcome!, jobId };
}

const novaCalls = async (action: string) =>
  (await worker.metrics.novaCalls.get()).values.find((value) => value.labels.action === action)?.value ?? 0;

before(async () => {
  requireRealNovaVariables(['NOVA_URL', 'RN_TOKEN', 'RN_IMAGE_ID', 'RN_FLAVOR_ID']);
  novaUrl = process.env.NOVA_URL!;
  token = process.env.RN_TOKEN!;
  const config = {
    name: 'real-nova',
    source: 'test',
    authType: 'admin_token',
    auth: { token },
    regionName: null,
    interface: 'public',
    endpointOverrides: { compute: novaUrl },
    apiTimeoutSeconds: null,
  } as CloudConfig;
  nova = createOpenStackClients({ config }).compute;
  redis = testRedis();
  const logger = createLogger({ service: 'instance-restart-worker', level: 'info', destination: logs });
  const settings = loadInstanceRestartSettings([
    {
      name: 'environment',
      values: {
        LIFEGUARD_INSTANCE_RESTART_POLL_SECONDS: '0.25',
        LIFEGUARD_INSTANCE_RESTART_MAX_PER_HOUR: '2',
      },
    },
  ]);
  worker = await InstanceRestartWorker.start({
    compute: nova,
    settings,
    keyPrefix: prefix,
    redis,
    connectRedis: (role, name) => connectRedis({ url: REDIS_URL, keyPrefix: prefix }, role, name, logger),
    events,
    logger,
    registry: createMetricsRegistry('instance-restart-worker'),
    instanceName: 'real-nova-test',
    now,
  });
  queue = new Queue(JOB_QUEUES.instanceRestart, { connection: redis, prefix: bullmqPrefix(prefix) });
  const answer = await novaCall('POST', '/servers', {
    server: {
      name: 'restart-me',
      imageRef: process.env.RN_IMAGE_ID,
      flavorRef: process.env.RN_FLAVOR_ID,
      networks: 'none',
      metadata: { HA_Enabled: 'True' },
    },
  });
  assert.equal(answer.status, 202, JSON.stringify(answer.body));
  serverId = (answer.body.server as { id: string }).id;
  await waitFor('the server ACTIVE', async () => (await status()) === 'ACTIVE', 120_000, 250);
});

after(async () => {
  if (!nova) return;
  await worker?.close(5000);
  await queue?.close();
  if (serverId) await novaCall('DELETE', `/servers/${serverId}`).catch(() => undefined);
  if (redis) {
    await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
  }
});

describe('instance restart against real Nova', () => {
  it('restarts a crashed HA_Enabled guest to ACTIVE (reset-state, stop, start), and a redelivered job does not restart it again', async (t) => {
    const crashedAt = await crash();
    const { outcome, jobId } = await restartJob('6f1c0d3e-0001-4a1b-8c2d-3e4f5a6b7c8d');
    const activeAt = new Date();
    assert.equal(outcome.outcome, 'restarted', outcome.reason);
    assert.equal(await status(), 'ACTIVE');
    assert.deepEqual(
      [await novaCalls('reset-state'), await novaCalls('stop'), await novaCalls('start')],
      [1, 1, 1],
    );
    const started = events.of('instance.restart.started');
    assert.equal(started.length, 1);
    assert.equal(started[0]?.data.status, 'ERROR');
    assert.equal(events.of('instance.restart.completed').length, 1);
    t.diagnostic(`crash → guest ACTIVE again: ${activeAt.getTime() - crashedAt.getTime()} ms`);

    // The same job delivered again (a worker died after the start, before BullMQ recorded the end).
    await queue.remove(jobId);
    const again = await restartJob('6f1c0d3e-0001-4a1b-8c2d-3e4f5a6b7c8d');
    assert.equal(again.outcome.outcome, 'restarted');
    assert.match(again.outcome.reason, /already brought the server back to ACTIVE/);
    assert.deepEqual(
      [await novaCalls('reset-state'), await novaCalls('stop'), await novaCalls('start')],
      [1, 1, 1],
    );
    assert.equal(events.of('instance.restart.started').length, 1, 'no second restart began');
  });

  it('finishes without acting for a guest without HA_Enabled (Masakari: finished)', async () => {
    assert.equal((await novaCall('DELETE', `/servers/${serverId}/metadata/HA_Enabled`)).status, 204);
    await crash();
    const { outcome } = await restartJob('6f1c0d3e-0002-4a1b-8c2d-3e4f5a6b7c8d');
    assert.deepEqual(outcome, { outcome: 'ignored', reason: 'not HA_Enabled=True in its metadata' });
    assert.equal(await status(), 'ERROR', 'left as it was');
    // Nova refuses metadata changes in vm_state error: back to active first.
    const reset = await novaCall('POST', `/servers/${serverId}/action`, {
      'os-resetState': { state: 'active' },
    });
    assert.equal(reset.status, 202);
    const metadata = await novaCall('PUT', `/servers/${serverId}/metadata/HA_Enabled`, {
      meta: { HA_Enabled: 'True' },
    });
    assert.equal(metadata.status, 200);
  });

  it('gives up past the restarts allowed within the hour, on an injected clock, and restarts again once the hour has passed', async () => {
    clockOffset = 10 * MINUTE;
    await crash();
    assert.equal((await restartJob('6f1c0d3e-0003-4a1b-8c2d-3e4f5a6b7c8d')).outcome.outcome, 'restarted');

    clockOffset = 20 * MINUTE;
    await crash();
    const given = await restartJob('6f1c0d3e-0004-4a1b-8c2d-3e4f5a6b7c8d');
    assert.equal(given.outcome.outcome, 'given-up');
    assert.match(given.outcome.reason, /restarted 2 time\(s\) within the last hour \(at most 2\)/);
    assert.equal(await status(), 'ERROR', 'left for a person');
    const [alert] = events.of('instance.restart.given-up');
    assert.deepEqual([alert?.data.restartsWithinHour, alert?.data.maxPerHour], [2, 2]);
    assert.equal((await worker.metrics.givenUp.get()).values[0]?.value, 1);
    assert.ok(logs.records().some((line) => line.level === 50 && line.msg === 'instance restart given up'));

    // An hour after the first restart only the second counts.
    clockOffset = 61 * MINUTE;
    assert.equal((await restartJob('6f1c0d3e-0005-4a1b-8c2d-3e4f5a6b7c8d')).outcome.outcome, 'restarted');
    assert.equal(await status(), 'ACTIVE');
  });
});
