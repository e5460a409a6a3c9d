import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  createEvent,
  EVENTS_EXCHANGE,
  type EvacuateHostJobData,
  type EvacuateHostJobResult,
  evacuateHostJobId,
  eventRoutingKey,
  JOB_NAMES,
  JOB_QUEUES,
} from '@lifeguard/contracts';
import { formatDisabledReason, IncidentStore, loadInstanceHaConfig } from '@lifeguard/instance-ha';
import { type CloudConfig, createOpenStackClients, type NovaClient } from '@lifeguard/openstack';
import {
  AmqpClient,
  bullmqPrefix,
  connectRedis,
  createLogger,
  createMetricsRegistry,
  declareEventsTopology,
  eventMessageOptions,
  leaseTokenKey,
  nodeMonitorLeaderKey,
} from '@lifeguard/runtime';
import {
  CapturedLines,
  createTestVhost,
  deleteKeysWithPrefix,
  hostDownEvidence,
  issueFencingToken,
  REDIS_URL,
  randomKeyPrefix,
  requireRealNovaVariables,
  type TestVhost,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import { type Job, Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { EvacuationWorker, loadEvacuationWorkerSettings } from '../src/index.ts';
import { RecordedEvents, workerConnection } from './support/evacuation-bed.ts';

const run = promisify(execFile);
const harness = resolve(import.meta.dirname, '../../../test/harness/real-nova');
const FAILED_HOST = 'compute2';

function harnessEnvironment() {
  requireRealNovaVariables(['NOVA_URL', 'GLANCE_URL', 'RN_TOKEN', 'RN_IMAGE_ID', 'RN_FLAVOR_ID']);
  return {
    novaUrl: process.env.NOVA_URL!,
    glanceUrl: process.env.GLANCE_URL!,
    token: process.env.RN_TOKEN!,
    imageId: process.env.RN_IMAGE_ID!,
    flavorId: process.env.RN_FLAVOR_ID!,
  };
}

let env: ReturnType<typeof harnessEnvironment>;
let nova: NovaClient;
let redis: Redis;
let vhost: TestVhost;
let amqp: AmqpClient;
let worker: EvacuationWorker;
let powerOn: Worker;
const prefix = randomKeyPrefix('evacuation-real-nova');
const events = new RecordedEvents();
const logs = new CapturedLines();
const servers: string[] = [];

async function novaCall(method: string, path: string, body?: unknown, microversion = '2.74') {
  const response = await fetch(`${env.novaUrl}${path}`, {
    method,
    headers: {
      'x-auth-token': env.token,
      'x-openstack-nova-api-version': microversion,
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** `compute.sh kill HOST` (SIGKILL of its nova-compute), or `start` when it is not running. */
async function compute(command: 'kill' | 'start', host: string) {
  if (command === 'start') {
    const { stdout } = await run(resolve(harness, 'compute.sh'), ['list'], { timeout: 60_000 });
    const running = stdout.split('\n').some((line) => line.startsWith(`${host}\t`) && !line.endsWith('\t-'));
    if (running) return;
  }
  await run(resolve(harness, 'compute.sh'), [command, host], { timeout: 120_000 });
}

async function service(host: string) {
  const [found] = await nova.listServices({ binary: 'nova-compute', host });
  if (!found) throw new Error(`no nova-compute on ${host}`);
  return found;
}

/**
 * The host back in service: its nova-compute running, not forced down, enabled, and up. Nova refuses
 * to lift `forced_down` (409) while the host's evacuation migrations are `done`, until the restarted
 * nova-compute has cleaned them up (`completed`): the reset is repeated until Nova takes it.
 */
async function backInService(host: string) {
  await compute('start', host);
  await waitFor(
    `${host} back in service`,
    async () => {
      const current = await service(host);
      if (current.forced_down || current.status !== 'enabled') {
        await nova.updateService(current.id, { forced_down: false, status: 'enabled' });
        return false;
      }
      return current.state === 'up';
    },
    120_000,
    500,
  );
}

before(async () => {
  env = harnessEnvironment();
  const config = {
    name: 'real-nova',
    source: 'test',
    authType: 'admin_token',
    auth: { token: env.token },
    regionName: null,
    interface: 'public',
    endpointOverrides: { compute: env.novaUrl, image: env.glanceUrl },
    apiTimeoutSeconds: null,
  } as CloudConfig;
  const clients = createOpenStackClients({ config });
  nova = clients.compute;
  redis = testRedis();
  vhost = await createTestVhost('evacuation-real-nova');
  const logger = createLogger({ service: 'evacuation-worker', level: 'info', destination: logs });
  amqp = await AmqpClient.connect({
    url: vhost.url,
    connectionName: 'evacuation-real-nova',
    service: 'test',
    logger,
  });
  await amqp.declare(declareEventsTopology);
  const { config: instanceHa } = loadInstanceHaConfig({
    path: '/nonexistent/config.yaml',
    // THRESHOLD 100: on a loaded machine another harness compute can miss DELTA for a moment, and the
    // re-check before each evacuate would then wait for THRESHOLD; these tests are about what Nova does.
    // DELTA 10: the harness's service_down_time (an operator's confirmation of the fence is taken once
    // the host's updated_at is older than DELTA).
    env: {
      DELTA: '10',
      SMART_EVACUATION: 'true',
      TAGGED_AGGREGATES: 'false',
      EVACUATION_TIMEOUT: '120',
      THRESHOLD: '100',
    },
  });
  const settings = loadEvacuationWorkerSettings(instanceHa, [
    {
      name: 'environment',
      values: {
        LIFEGUARD_EVACUATION_FIRST_CHECK_SECONDS: '1',
        LIFEGUARD_EVACUATION_POLL_SECONDS: '0.5',
        LIFEGUARD_EVACUATION_RECHECK_SECONDS: '1',
      },
    },
  ]);
  worker = await EvacuationWorker.start({
    compute: nova,
    image: clients.image,
    config: instanceHa,
    settings,
    keyPrefix: prefix,
    redis,
    connectRedis: (role, name) => connectRedis({ url: REDIS_URL, keyPrefix: prefix }, role, name, logger),
    events,
    logger,
    registry: createMetricsRegistry('evacuation-worker'),
    amqp,
    instanceName: 'real-nova-test',
  });
  // The fencing worker's power-on: here the host "boots" by starting its nova-compute again.
  powerOn = new Worker(
    JOB_QUEUES.fencing,
    async (job: Job) => {
      const { host } = job.data as { host: string };
      await compute('start', host);
      return { host, poweredOn: true };
    },
    { connection: workerConnection(), prefix: bullmqPrefix(prefix) },
  );
});

after(async () => {
  if (!nova) return; // the harness was not running: nothing was started
  await worker?.close(5000);
  await powerOn?.close(true);
  await amqp?.close();
  for (const id of servers) await novaCall('DELETE', `/servers/${id}`).catch(() => undefined);
  // Leave the harness as found: the host's nova-compute running, enabled, not forced down and
  // reporting again, so that the next file's THRESHOLD does not count it as impacted.
  try {
    await backInService(FAILED_HOST);
  } finally {
    await vhost?.delete();
    if (redis) {
      await deleteKeysWithPrefix(redis, prefix);
      redis.disconnect();
    }
  }
});

describe('evacuation against real Nova', () => {
  it('brings a killed compute’s servers up ACTIVE on another host, then re-enables the host after its nova-compute restarts', async () => {
    await compute('start', FAILED_HOST);
    await waitFor(`${FAILED_HOST} up`, async () => (await service(FAILED_HOST)).state === 'up', 120_000, 500);
    for (const name of ['ha-1', 'ha-2']) {
      const answer = await novaCall('POST', '/servers', {
        server: { name, imageRef: env.imageId, flavorRef: env.flavorId, networks: 'none', host: FAILED_HOST },
      });
      assert.equal(answer.status, 202, JSON.stringify(answer.body));
      servers.push((answer.body.server as { id: string }).id);
    }
    await waitFor(
      'servers ACTIVE',
      async () =>
        (await Promise.all(servers.map((id) => nova.getServer(id)))).every(
          (server) => server.status === 'ACTIVE',
        ),
      120_000,
      500,
    );

    // The host fails; lifeguard's fencing worker would power it off and mark Nova: here the process is
    // SIGKILLed (no BMC in the harness), the fence is vouched for, forced_down and the marker are set.
    await compute('kill', FAILED_HOST);
    const failed = await service(FAILED_HOST);
    const incidents = new IncidentStore(redis, prefix);
    const { incident } = await incidents.openIncident({
      host: FAILED_HOST,
      serviceId: failed.id,
      fencingToken: 1,
      kdumpFenced: false,
      evidence: hostDownEvidence(failed.id, { zone: failed.zone ?? null }),
    });
    const fencedAt = new Date().toISOString();
    await incidents.recordFence(incident.id, {
      proof: 'operator-confirmed',
      method: 'operator',
      at: fencedAt,
      by: 'real-nova test',
      note: 'nova-compute SIGKILLed',
    });
    await nova.updateService(failed.id, { forced_down: true });
    await nova.updateService(failed.id, {
      status: 'disabled',
      disabled_reason: formatDisabledReason({ kind: 'evacuating', incidentId: incident.id }),
    });
    const evacuation = new Queue(JOB_QUEUES.evacuation, { connection: redis, prefix: bullmqPrefix(prefix) });
    const jobId = evacuateHostJobId(FAILED_HOST, incident.id);
    const data: EvacuateHostJobData = {
      host: FAILED_HOST,
      serviceId: failed.id,
      incidentId: incident.id,
      kdumpFenced: false,
      resume: false,
      fencedAt,
    };
    await evacuation.add(JOB_NAMES.evacuateHost, data, { jobId });
    const result = await waitFor(
      'the host evacuated',
      async () => {
        if ((await evacuation.getJobState(jobId)) !== 'completed') return false;
        return (await evacuation.getJob(jobId))?.returnvalue as EvacuateHostJobResult;
      },
      180_000,
      500,
    );
    await evacuation.close();
    assert.equal(result.outcome, 'evacuated');
    assert.deepEqual(new Set(result.evacuatedInstances), new Set(servers));
    for (const id of servers) {
      const server = await nova.getServer(id);
      assert.equal(server.status, 'ACTIVE');
      assert.notEqual(server['OS-EXT-SRV-ATTR:host'], FAILED_HOST);
      assert.equal(server.locked, false);
    }
    assert.equal(
      logs
        .records()
        .filter((record) => /^Evacuation accepted for .* \(nova-req: req-/.test(String(record.msg))).length,
      2,
    );
    assert.match((await service(FAILED_HOST)).disabled_reason ?? '', /^lifeguard evacuation complete: /);

    // The node monitor asks for the re-enable; the power-on restarted nova-compute, which moved the
    // migrations from `done` to `completed`, so Nova lets forced_down go and the service comes up.
    const request = createEvent(
      'host.recovery.requested',
      {
        host: FAILED_HOST,
        serviceId: failed.id,
        incidentId: incident.id,
        fencingToken: 1,
        status: 'disabled',
        state: 'down',
        forcedDown: true,
        disabledReason: (await service(FAILED_HOST)).disabled_reason ?? null,
      },
      { service: 'node-monitor', instance: 'real-nova-test' },
    );
    await issueFencingToken(redis, leaseTokenKey(nodeMonitorLeaderKey(prefix)), 1);
    await amqp.publish(
      EVENTS_EXCHANGE,
      eventRoutingKey(request),
      Buffer.from(JSON.stringify(request)),
      eventMessageOptions(request),
    );
    await waitFor('the host re-enabled', () => events.of('host.reenabled').length === 1, 120_000, 500);
    const reenabled = await service(FAILED_HOST);
    assert.equal(reenabled.status, 'enabled');
    assert.equal(reenabled.forced_down, false);
    assert.equal(reenabled.state, 'up');
    assert.equal((await incidents.get(incident.id))?.state, 'closed');
    const migrations = await nova.listMigrations({ sourceCompute: FAILED_HOST, migrationType: 'evacuation' });
    assert.ok(
      migrations
        .filter((migration) => servers.includes(migration.instance_uuid))
        .every((migration) => migration.status === 'completed'),
    );
  });

  it('a server its owner deletes right after lifeguard’s evacuate is reported deleted, not failed: Nova answers 404 and lists its migration no more (SMART_EVACUATION)', async () => {
    await backInService(FAILED_HOST);
    const booted: Record<string, string> = {};
    for (const name of ['ha-kept', 'ha-deleted']) {
      const answer = await novaCall('POST', '/servers', {
        server: { name, imageRef: env.imageId, flavorRef: env.flavorId, networks: 'none', host: FAILED_HOST },
      });
      assert.equal(answer.status, 202, JSON.stringify(answer.body));
      booted[name] = (answer.body.server as { id: string }).id;
      servers.push(booted[name]!);
    }
    const kept = booted['ha-kept']!;
    const deleted = booted['ha-deleted']!;
    await waitFor(
      'servers ACTIVE',
      async () =>
        (await Promise.all([kept, deleted].map((id) => nova.getServer(id)))).every(
          (server) => server.status === 'ACTIVE',
        ),
      120_000,
      500,
    );
    await compute('kill', FAILED_HOST);
    const failed = await service(FAILED_HOST);
    const incidents = new IncidentStore(redis, prefix);
    const { incident } = await incidents.openIncident({
      host: FAILED_HOST,
      serviceId: failed.id,
      fencingToken: 1,
      kdumpFenced: false,
      evidence: hostDownEvidence(failed.id, { zone: failed.zone ?? null }),
    });
    const fencedAt = new Date().toISOString();
    await incidents.recordFence(incident.id, {
      proof: 'operator-confirmed',
      method: 'operator',
      at: fencedAt,
      by: 'real-nova test',
      note: 'nova-compute SIGKILLed',
    });
    await nova.updateService(failed.id, { forced_down: true });
    await nova.updateService(failed.id, {
      status: 'disabled',
      disabled_reason: formatDisabledReason({ kind: 'evacuating', incidentId: incident.id }),
    });
    const evacuation = new Queue(JOB_QUEUES.evacuation, { connection: redis, prefix: bullmqPrefix(prefix) });
    const jobId = evacuateHostJobId(FAILED_HOST, incident.id);
    await evacuation.add(
      JOB_NAMES.evacuateHost,
      {
        host: FAILED_HOST,
        serviceId: failed.id,
        incidentId: incident.id,
        kdumpFenced: false,
        resume: false,
        fencedAt,
      },
      { jobId },
    );
    // The owner deletes the server as soon as Nova accepted its evacuate: lifeguard's next look comes
    // LIFEGUARD_EVACUATION_FIRST_CHECK_SECONDS (1 s) later, on a server that is gone.
    await waitFor(
      'the evacuate of the server to delete accepted',
      () =>
        logs.records().some((record) => String(record.msg).startsWith(`Evacuation accepted for ${deleted}`)),
      120_000,
      10,
    );
    const deletion = await novaCall('DELETE', `/servers/${deleted}`);
    assert.equal(deletion.status, 204);
    const result = await waitFor(
      'the host evacuated',
      async () => {
        if ((await evacuation.getJobState(jobId)) !== 'completed') return false;
        return (await evacuation.getJob(jobId))?.returnvalue as EvacuateHostJobResult;
      },
      180_000,
      500,
    );
    await evacuation.close();
    assert.equal(result.outcome, 'evacuated', JSON.stringify(result));
    assert.deepEqual(result.evacuatedInstances, [kept]);
    assert.deepEqual(result.failedInstances, []);
    const skipped = events
      .of('instance.evacuation.skipped')
      .filter((event) => event.data.incidentId === incident.id);
    assert.deepEqual(
      skipped.map((event) => [event.data.instanceId, event.data.reason]),
      [[deleted, 'deleted']],
    );
    assert.equal(
      events.of('instance.evacuation.failed').filter((event) => event.data.incidentId === incident.id).length,
      0,
    );
    assert.equal((await novaCall('GET', `/servers/${deleted}`)).status, 404);
    assert.deepEqual(await nova.listMigrations({ instanceUuid: deleted, migrationType: 'evacuation' }), []);
    assert.equal((await incidents.get(incident.id))?.state, 'evacuated');
  });
});
