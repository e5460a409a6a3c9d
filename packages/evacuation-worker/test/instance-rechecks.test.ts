import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JOB_QUEUES } from '@lifeguard/contracts';
import { bullmqPrefix } from '@lifeguard/runtime';
import { waitFor } from '@lifeguard/testing';
import { type Queue, Worker } from 'bullmq';
import { INSTANCE_JOB_OPTIONS } from '../src/index.ts';
import { bedsClosedAfterTests, type EvacuationBed, workerConnection } from './support/evacuation-bed.ts';

// Every evacuate request — a retry after a failed attempt, a job taken over after its lock expired —
// first re-reads the world through the gates of the host's first decision.

const bed = bedsClosedAfterTests();

/** compute1 is back: its nova-compute runs again and a person lifted forced_down. */
async function hostBack(test: EvacuationBed): Promise<void> {
  test.sim.reviveHost('compute1');
  const service = await test.service('compute1');
  await test.nova.updateService(service.id, { forced_down: false });
  await waitFor('compute1 up', async () => (await test.service('compute1')).state === 'up');
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
  return { state, failedReason: (await queue.getJob(jobId))!.failedReason };
}

describe('an evacuate request re-reads the world first', () => {
  it('a SMART_EVACUATION retry does not evacuate again once the host is back up and no longer forced down', async () => {
    const test = await bed({
      instanceHa: { SMART_EVACUATION: 'true' },
      cloud: { model: { evacuation: { acceptMilliseconds: 0, rebuildMilliseconds: 1500 } } },
    });
    const server = test.sim.addServer({ host: 'compute1', name: 'web' });
    test.sim.failEvacuations([server.id], 'failed', 1);
    const { jobId, incident } = await test.failHost('compute1');
    await waitFor('the first evacuation under way', () => test.sim.evacuateCalls(server.id) === 1);
    await hostBack(test);
    const { result } = await test.hostJobOutcome(jobId);
    assert.equal(result?.outcome, 'failed');
    assert.equal(test.sim.evacuateCalls(server.id), 1, 'not evacuated again');
    const [failed] = test.events.of('instance.evacuation.failed');
    assert.match(
      failed!.data.reason,
      /^compute1 may no longer be evacuated: the host is not down: compute1 reports to Nova: state up, updated_at \d+ s ago \(DELTA 30 s\) \(fenced power-off-confirmed at [^)]+\)$/,
    );
    assert.equal((await test.incidents.get(incident.id))?.state, 'failed');
  });

  it('a job taken over after its lock expired does not evacuate a host that came back meanwhile', async () => {
    const test = await bed({ inProcessWorker: false, instanceHa: { SMART_EVACUATION: 'true' } });
    const server = test.sim.addServer({ host: 'compute1', name: 'db' });
    const { incident } = await test.failHost('compute1', { addJob: false });
    const { queue, jobId } = await test.addInstanceJob('compute1', server, incident.id, INSTANCE_JOB_OPTIONS);
    // A worker takes the job and dies before its first evacuate: the 3 s lock lapses.
    const dead = new Worker(JOB_QUEUES.evacuationInstance, null, {
      connection: workerConnection(),
      prefix: bullmqPrefix(test.prefix),
      autorun: false,
      lockDuration: 3000,
    });
    assert.equal((await dead.getNextJob('killed-worker'))?.id, jobId);
    await dead.close();
    await hostBack(test);
    await test.startWorker();
    const outcome = await finished(queue, jobId);
    await queue.close();
    assert.ok(
      test.messages('job taken over from a worker that stopped answering').length >= 1,
      'the job was taken over after a stall',
    );
    assert.equal(outcome.state, 'failed');
    assert.match(
      outcome.failedReason,
      /compute1 may no longer be evacuated: the host is not down: compute1 reports to Nova: state up, updated_at \d+ s ago/,
    );
    assert.equal(test.sim.evacuateCalls(server.id), 0, 'never evacuated');
    assert.equal(test.servers([server.id])[0]!.host, 'compute1');
  });

  it('a re-check that cannot read Nova (503 past the client retries, more times than a job has attempts) waits the outage out without spending an attempt, then evacuates once', async () => {
    const test = await bed({ inProcessWorker: false, instanceHa: { SMART_EVACUATION: 'true' } });
    const server = test.sim.addServer({ host: 'compute1', name: 'brownout' });
    const { incident } = await test.failHost('compute1', { addJob: false });
    // Each read of the compute services makes 4 attempts: 20 answers of 503 fail at least 3 re-checks
    // in a row, as many as INSTANCE_JOB_OPTIONS allows attempts (one read may be another caller's).
    test.sim.injectResponse({
      status: 503,
      body: JSON.stringify({ computeFault: { code: 503, message: 'Service Unavailable' } }),
      contentType: 'application/json',
      pathPrefix: '/compute/v2.1/os-services',
      count: 5 * 4,
    });
    const { queue, jobId } = await test.addInstanceJob('compute1', server, incident.id, INSTANCE_JOB_OPTIONS);
    await test.startWorker();
    const outcome = await finished(queue, jobId);
    const job = await queue.getJob(jobId);
    await queue.close();
    assert.equal(outcome.state, 'completed', outcome.failedReason);
    assert.equal(job?.attemptsMade, 1, 'the errors spent no attempt: it completed on its first');
    const retried = test.messages(`evacuation of ${server.id} failed; retrying`).length;
    assert.ok(retried >= (INSTANCE_JOB_OPTIONS.attempts ?? 1), `retried ${retried} times`);
    assert.equal(test.sim.evacuateCalls(server.id), 1, 'one evacuate reached Nova');
    assert.equal(test.events.of('instance.evacuation.failed').length, 0, 'no failure announced');
  });

  it('a job taken over after its lock expired ends as deleted when the owner deleted the server meanwhile', async () => {
    const test = await bed({ inProcessWorker: false, instanceHa: { SMART_EVACUATION: 'true' } });
    const server = test.sim.addServer({ host: 'compute1', name: 'gone' });
    const { incident } = await test.failHost('compute1', { addJob: false });
    const { queue, jobId } = await test.addInstanceJob('compute1', server, incident.id, INSTANCE_JOB_OPTIONS);
    const dead = new Worker(JOB_QUEUES.evacuationInstance, null, {
      connection: workerConnection(),
      prefix: bullmqPrefix(test.prefix),
      autorun: false,
      lockDuration: 3000,
    });
    assert.equal((await dead.getNextJob('killed-worker'))?.id, jobId);
    await dead.close();
    const deleted = await fetch(`${test.sim.urls.compute}/servers/${server.id}`, {
      method: 'DELETE',
      headers: { 'x-auth-token': 'admin:admin' },
    });
    assert.equal(deleted.status, 204);
    await test.startWorker();
    const outcome = await finished(queue, jobId);
    await queue.close();
    assert.equal(outcome.state, 'completed', outcome.failedReason);
    assert.equal(test.sim.evacuateCalls(server.id), 0);
    assert.deepEqual(
      test.events.of('instance.evacuation.skipped').map((event) => event.data.reason),
      ['deleted'],
    );
  });
});
