// The restart's failure and retry paths on the simulated cloud, which can do what the shared real-Nova
// harness cannot do safely while other files use it: a nova-compute that dies behind Nova's back (its
// casts are never carried out while Nova still reports it up) and a Nova answering 500 once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type CloudSim, startCloudSim } from '@lifeguard/cloud-sim';
import {
  INSTANCE_RESTART_JOB_OPTIONS,
  type InstanceRestartOutcome,
  instanceRestartJobId,
  JOB_NAMES,
  JOB_QUEUES,
} from '@lifeguard/contracts';
import { type CloudConfig, createOpenStackClients } from '@lifeguard/openstack';
import { bullmqPrefix, connectRedis, createLogger, createMetricsRegistry } from '@lifeguard/runtime';
import {
  CapturedLines,
  deleteKeysWithPrefix,
  REDIS_URL,
  randomKeyPrefix,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { InstanceRestartWorker, loadInstanceRestartSettings } from '../src/index.ts';
import { RecordedEvents } from './support/recorded-events.ts';

const prefix = randomKeyPrefix('instance-restart-sim');
const events = new RecordedEvents();
const logs = new CapturedLines();
let sim: CloudSim;
let redis: Redis;
let queue: Queue;
let worker: InstanceRestartWorker;

async function outcomeOf(
  instanceId: string,
  host: string,
  failureId: string,
): Promise<InstanceRestartOutcome> {
  const jobId = instanceRestartJobId(instanceId, failureId);
  await queue.add(
    JOB_NAMES.instanceRestart,
    {
      instanceId,
      host,
      failure: { source: 'masakari-notification', event: 'LIFECYCLE', virDomainEvent: 'STOPPED_FAILED' },
      notificationUuid: failureId,
      observedAt: new Date(Date.now() - 1000).toISOString(),
    },
    // Back-off of 0.2 s instead of 2 s: the attempts are what is tested.
    { ...INSTANCE_RESTART_JOB_OPTIONS, backoff: { type: 'exponential', delay: 200 }, jobId },
  );
  return waitFor(
    `job ${jobId} completed`,
    async () => {
      // One read of the job gives its return value and finishedOn together; a failed attempt that
      // will be retried leaves finishedOn and failedReason set but no return value.
      const job = await queue.getJob(jobId);
      if (job && (await job.getState()) === 'failed') throw new Error(`job failed: ${job.failedReason}`);
      return job?.finishedOn && job.returnvalue ? (job.returnvalue as InstanceRestartOutcome) : undefined;
    },
    30_000,
  );
}

before(async () => {
  sim = await startCloudSim({ hosts: 2 });
  const config = {
    name: 'cloud-sim',
    source: 'test',
    authType: 'admin_token',
    auth: { token: 'admin:admin' },
    regionName: null,
    interface: 'public',
    endpointOverrides: { compute: sim.urls.compute },
    apiTimeoutSeconds: null,
  } as CloudConfig;
  redis = testRedis();
  const logger = createLogger({ service: 'instance-restart-worker', level: 'info', destination: logs });
  worker = await InstanceRestartWorker.start({
    compute: createOpenStackClients({ config, logger }).compute,
    settings: loadInstanceRestartSettings([
      {
        name: 'environment',
        values: {
          LIFEGUARD_INSTANCE_RESTART_POLL_SECONDS: '0.05',
          LIFEGUARD_INSTANCE_RESTART_STOP_TIMEOUT_SECONDS: '1',
        },
      },
    ]),
    keyPrefix: prefix,
    redis,
    connectRedis: (role, name) => connectRedis({ url: REDIS_URL, keyPrefix: prefix }, role, name, logger),
    events,
    logger,
    registry: createMetricsRegistry('instance-restart-worker'),
    instanceName: 'sim-test',
  });
  queue = new Queue(JOB_QUEUES.instanceRestart, { connection: redis, prefix: bullmqPrefix(prefix) });
});

after(async () => {
  await worker?.close(5000);
  await queue?.close();
  await sim?.close();
  if (redis) {
    await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
  }
});

describe('instance restart failures (simulated cloud)', () => {
  it('a Nova 500 on a server action is retried by BullMQ with back-off, and the retried job completes the restart once', async () => {
    const server = sim.addServer({ host: 'compute2', metadata: { HA_Enabled: 'true' }, vmState: 'error' });
    sim.injectResponse({
      status: 500,
      body: '{"computeFault": {"code": 500, "message": "Unexpected API Error."}}',
      contentType: 'application/json',
      pathPrefix: `/compute/v2.1/servers/${server.id}/action`,
      count: 2,
    });
    const outcome = await outcomeOf(server.id, 'compute2', 'b7e1c2d3-0001-4c5d-8e9f-0a1b2c3d4e5f');
    assert.equal(outcome.outcome, 'restarted', outcome.reason);
    assert.equal(server.vmState, 'active');
    const job = await queue.getJob(instanceRestartJobId(server.id, 'b7e1c2d3-0001-4c5d-8e9f-0a1b2c3d4e5f'));
    assert.equal(job?.attemptsMade, 3, 'two attempts failed on the 500s, the third restarted');
    const started = events
      .of('instance.restart.started')
      .filter((event) => event.data.instanceId === server.id);
    assert.equal(
      new Set(started.map((event) => event.id)).size,
      1,
      'one started event (republished under its id)',
    );
    const retried = logs
      .records()
      .filter((line) => line.msg === 'instance restart interrupted; it will be retried');
    assert.equal(retried.length, 2);
  });

  it('a stop never carried out (nova-compute died, Nova not yet aware) ends failed when the stop wait runs out', async () => {
    const server = sim.addServer({ host: 'compute1', metadata: { HA_Enabled: 'true' }, vmState: 'active' });
    sim.killHost('compute1');
    const outcome = await outcomeOf(server.id, 'compute1', 'b7e1c2d3-0002-4c5d-8e9f-0a1b2c3d4e5f');
    assert.equal(outcome.outcome, 'failed');
    assert.equal(outcome.notificationStatus, 'error');
    assert.match(
      outcome.reason,
      /not SHUTOFF within 1 s \(status ACTIVE, vm_state active, task_state powering-off\)/,
    );
    const [failed] = events.of('instance.restart.failed');
    assert.equal(failed?.data.instanceId, server.id);
    assert.equal(failed?.data.reason, outcome.reason);
  });
});
