import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SimServer } from '@lifeguard/cloud-sim';
import { type EvacuateInstanceJobResult, JOB_QUEUES } from '@lifeguard/contracts';
import { bullmqPrefix } from '@lifeguard/runtime';
import { waitFor } from '@lifeguard/testing';
import { type Queue, Worker } from 'bullmq';
import {
  EVACUATION_LOCK_REASON,
  HostEvacuationState,
  INSTANCE_JOB_OPTIONS,
  type InstanceEvacuationProgress,
} from '../src/index.ts';
import { bedsClosedAfterTests, type EvacuationBed, workerConnection } from './support/evacuation-bed.ts';

// EVACUATION_TIMEOUT is judged only after reading Nova: a job taken over (or a host resumed) after
// the deadline must accept what Nova shows evacuated, and fail only what it shows not landed.

const bed = bedsClosedAfterTests();

/** Seconds; shorter than the 3 s job lock of the test timings, so every takeover comes after it. */
const TIMEOUT_SECONDS = 2;

/**
 * What a worker SIGKILLed right after its evacuate leaves behind: the instance job active under a
 * lock nobody renews, its progress saying the evacuate was accepted (`startedAt` when it was sent),
 * the server locked and being evacuated. The test's worker, started afterwards, takes the job over
 * through BullMQ's stalled-job check once the 3 s lock lapsed: after EVACUATION_TIMEOUT.
 */
async function abandonedAfterEvacuate(
  test: EvacuationBed,
  server: SimServer,
  landed: (server: SimServer) => boolean,
): Promise<{ queue: Queue; jobId: string; startedAt: number }> {
  const { incident } = await test.failHost('compute1', { addJob: false });
  const { queue, jobId } = await test.addInstanceJob('compute1', server, incident.id, INSTANCE_JOB_OPTIONS);
  const dead = new Worker(JOB_QUEUES.evacuationInstance, null, {
    connection: workerConnection(),
    prefix: bullmqPrefix(test.prefix),
    autorun: false,
    lockDuration: 3000,
  });
  const job = await dead.getNextJob('killed-worker');
  assert.equal(job?.id, jobId);
  await test.nova.lockServer(server.id, EVACUATION_LOCK_REASON);
  const startedAt = Date.now();
  const accepted = await test.nova.evacuate(server.id);
  const progress: InstanceEvacuationProgress = {
    attempts: 1,
    errors: 0,
    awaitingResult: true,
    startedAt: new Date(startedAt).toISOString(),
    novaRequestId: accepted.requestId,
  };
  await job!.updateProgress(progress);
  await dead.close();
  await waitFor('Nova to show the state the takeover finds', () =>
    landed(test.sim.model.servers.get(server.id)!),
  );
  await test.startWorker();
  return { queue, jobId, startedAt };
}

async function finished(queue: Queue, jobId: string) {
  const state = await waitFor(
    'the instance job to finish',
    async () => {
      const current = await queue.getJobState(jobId);
      return current === 'completed' || current === 'failed' ? current : false;
    },
    30_000,
    50,
  );
  const job = (await queue.getJob(jobId))!;
  return {
    state,
    result: job.returnvalue as EvacuateInstanceJobResult | null,
    failedReason: job.failedReason,
    finishedOn: job.finishedOn ?? 0,
  };
}

describe('an instance job taken over after EVACUATION_TIMEOUT (SMART_EVACUATION)', () => {
  it('is evacuated, not failed, when Nova already shows it ACTIVE on another host', async () => {
    const test = await bed({
      inProcessWorker: false,
      instanceHa: { SMART_EVACUATION: 'true', EVACUATION_TIMEOUT: String(TIMEOUT_SECONDS) },
    });
    const server = test.sim.addServer({ host: 'compute1', name: 'web' });
    const { queue, jobId, startedAt } = await abandonedAfterEvacuate(
      test,
      server,
      (now) => now.host !== 'compute1' && now.taskState === null,
    );
    const outcome = await finished(queue, jobId);
    await queue.close();
    assert.ok(
      test.messages('job taken over from a worker that stopped answering').length >= 1,
      'the job was taken over after a stall',
    );
    assert.ok(outcome.finishedOn > startedAt + TIMEOUT_SECONDS * 1000, 'taken over after the deadline');
    assert.equal(outcome.state, 'completed', outcome.failedReason);
    assert.equal(outcome.result?.outcome, 'evacuated');
    assert.equal(test.sim.evacuateCalls(server.id), 1, 'never evacuated twice');
    assert.equal(test.events.of('instance.evacuation.failed').length, 0);
    const evacuated = test.events.of('instance.evacuated');
    assert.equal(evacuated.length, 1);
    const [now] = test.servers([server.id]);
    assert.equal(evacuated[0]!.data.targetHost, now!.host);
    assert.equal(now!.vmState, 'active');
    assert.equal(now!.locked, false);
  });

  it('still fails for the timeout when its evacuation is still under way', async () => {
    const test = await bed({
      inProcessWorker: false,
      instanceHa: { SMART_EVACUATION: 'true', EVACUATION_TIMEOUT: String(TIMEOUT_SECONDS) },
      cloud: { model: { evacuation: { acceptMilliseconds: 0, rebuildMilliseconds: 60_000 } } },
    });
    const server = test.sim.addServer({ host: 'compute1', name: 'slow' });
    const { queue, jobId } = await abandonedAfterEvacuate(
      test,
      server,
      (now) => now.taskState === 'rebuild_spawning',
    );
    const outcome = await finished(queue, jobId);
    await queue.close();
    assert.equal(outcome.state, 'failed');
    assert.match(
      outcome.failedReason,
      /^not evacuated within EVACUATION_TIMEOUT \(2 s\): its evacuation is still under way \(REBUILD on compute1, task_state rebuild_spawning, migration pre-migrating\)$/,
    );
    assert.equal(test.sim.evacuateCalls(server.id), 1);
    assert.equal(test.events.of('instance.evacuation.failed').length, 1);
    assert.equal(test.servers([server.id])[0]!.locked, false);
  });

  it('still fails for the timeout, without evacuating again, when it sits on the failed host after a failed attempt', async () => {
    const test = await bed({
      inProcessWorker: false,
      instanceHa: { SMART_EVACUATION: 'true', EVACUATION_TIMEOUT: String(TIMEOUT_SECONDS) },
    });
    const server = test.sim.addServer({ host: 'compute1', name: 'stuck' });
    test.sim.failEvacuations([server.id], 'error');
    const { queue, jobId } = await abandonedAfterEvacuate(
      test,
      server,
      (now) => now.vmState === 'error' && now.taskState === null,
    );
    const outcome = await finished(queue, jobId);
    await queue.close();
    assert.equal(outcome.state, 'failed');
    assert.match(
      outcome.failedReason,
      /^not evacuated within EVACUATION_TIMEOUT \(2 s\): evacuation migration error: Nova says "No valid host was found\. There are not enough hosts available\." \(ERROR on compute1\)$/,
    );
    assert.equal(test.sim.evacuateCalls(server.id), 1, 'no new attempt after the deadline');
    assert.equal(test.servers([server.id])[0]!.host, 'compute1');
  });
});

/**
 * Traditional mode: the host job reaches `verify` while the rebuilds run; its worker stops before
 * any instance landed and before EVACUATION_TIMEOUT (counted from the start of verification), and
 * a worker started after the deadline resumes the verification. `beforeResume` runs just before.
 */
async function verificationResumedLate(
  test: EvacuationBed,
  servers: SimServer[],
  landed: (server: SimServer) => boolean,
  beforeResume: () => void = () => undefined,
) {
  const { jobId } = await test.failHost('compute1');
  const verifyStartedAt = await waitFor(
    'the host job to verify',
    async () => {
      const job = await test.evacuationQueue.getJob(jobId);
      const state = HostEvacuationState.safeParse(job?.data.evacuation);
      return state.success && state.data.verifyStartedAt !== null
        ? Date.parse(state.data.verifyStartedAt)
        : false;
    },
    10_000,
    20,
  );
  await test.worker!.close(5000);
  assert.ok(Date.now() < verifyStartedAt + TIMEOUT_SECONDS * 1000, 'stopped before the deadline');
  for (const server of test.servers(servers.map((each) => each.id)))
    assert.equal(server.host, 'compute1', `${server.name} had not landed when the worker stopped`);
  await waitFor('Nova to show the state the resumed verification finds', () =>
    test.servers(servers.map((each) => each.id)).every(landed),
  );
  const resumeAt = verifyStartedAt + TIMEOUT_SECONDS * 1000 + 200;
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, resumeAt - Date.now())));
  beforeResume();
  await test.startWorker();
  return test.hostJobOutcome(jobId);
}

describe('traditional-mode verification resumed after EVACUATION_TIMEOUT', () => {
  const options = {
    instanceHa: { EVACUATION_TIMEOUT: String(TIMEOUT_SECONDS) },
    cloud: { model: { evacuation: { acceptMilliseconds: 0, rebuildMilliseconds: 1500 } } },
  };
  const idleElsewhere = (server: SimServer) => server.host !== 'compute1' && server.taskState === null;

  it('accepts instances Nova shows landed, restoring an ERROR one first, and reports the host evacuated', async () => {
    const test = await bed(options);
    const servers = [
      test.sim.addServer({ host: 'compute1', name: 'active' }),
      test.sim.addServer({ host: 'compute1', name: 'broken', vmState: 'error' }),
    ];
    const { result, failedReason } = await verificationResumedLate(test, servers, idleElsewhere);
    assert.equal(result?.outcome, 'evacuated', failedReason ?? JSON.stringify(test.events.events));
    assert.equal(test.events.of('instance.evacuation.failed').length, 0);
    assert.equal(test.events.of('instance.evacuated').length, 2);
    const [active, broken] = test.servers(servers.map((server) => server.id));
    assert.equal(active!.vmState, 'active');
    assert.equal(broken!.vmState, 'error', 'its ERROR state was restored after the deadline');
    for (const server of [active!, broken!]) {
      assert.notEqual(server.host, 'compute1');
      assert.equal(server.locked, false);
      assert.equal(test.sim.evacuateCalls(server.id), 1);
    }
    assert.match((await test.service('compute1')).disabled_reason ?? '', /^lifeguard evacuation complete: /);
  });

  it('does not fail an instance on a Nova read that failed after the deadline: it reads again', async () => {
    const test = await bed(options);
    const servers = [test.sim.addServer({ host: 'compute1', name: 'web' })];
    const { result, failedReason } = await verificationResumedLate(test, servers, idleElsewhere, () =>
      test.sim.injectResponse({
        status: 500,
        body: '<html><body>Internal Server Error</body></html>',
        contentType: 'text/html',
        pathPrefix: '/compute/v2.1/os-migrations',
        count: 3,
      }),
    );
    assert.equal(result?.outcome, 'evacuated', failedReason ?? JSON.stringify(test.events.events));
    assert.ok(test.messages(`could not read ${servers[0]!.id} while verifying`).length >= 3);
    assert.equal(test.events.of('instance.evacuation.failed').length, 0);
  });

  it('still fails the host for the timeout when an instance is still being rebuilt', async () => {
    const test = await bed(options);
    const servers = [test.sim.addServer({ host: 'compute1', name: 'slow' })];
    test.sim.setEvacuationTiming({ rebuildMilliseconds: 60_000 });
    const { result } = await verificationResumedLate(
      test,
      servers,
      (server) => server.taskState === 'rebuild_spawning',
    );
    assert.equal(result?.outcome, 'failed');
    const failed = test.events.of('instance.evacuation.failed');
    assert.equal(failed.length, 1);
    assert.match(
      failed[0]!.data.reason,
      /^not settled on another host within EVACUATION_TIMEOUT \(2 s\): its evacuation is still under way \(REBUILD on compute1, task_state rebuild_spawning, migration pre-migrating\)$/,
    );
    assert.equal(test.servers([servers[0]!.id])[0]!.locked, false);
    assert.match((await test.service('compute1')).disabled_reason ?? '', /^lifeguard evacuation FAILED: /);
  });
});
