// Two runs of one instance job — the first slow past its BullMQ job lock, the second the run BullMQ
// handed the job to — send one evacuate between them (docs/safety-rules.md#rule-3-one-incident-per-host).
// Nova accepts a second evacuate of a server being rebuilt (compute/api.py checks no task_state), so
// only the evacuate claim keeps the second run from rebuilding the server twice.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type EvacuateInstanceJobResult, JOB_QUEUES } from '@lifeguard/contracts';
import { type ComputeApi, createOpenStackClients } from '@lifeguard/openstack';
import { bullmqPrefix } from '@lifeguard/runtime';
import { waitFor } from '@lifeguard/testing';
import { INSTANCE_JOB_OPTIONS } from '../src/index.ts';
import { bedsClosedAfterTests, cloudConfigFor, type EvacuationBed } from './support/evacuation-bed.ts';

const bed = bedsClosedAfterTests();

/**
 * A Nova client whose first evacuate request waits, after every check the run made before it, until
 * the test lets it go on to Nova (`release`) or fail before reaching it (`drop`): a run slow at the
 * worst moment, or dead there.
 */
function heldFirstEvacuate(test: EvacuationBed) {
  const compute = createOpenStackClients({ config: cloudConfigFor(test.sim) }).compute;
  let letGo!: (go: boolean) => void;
  const decided = new Promise<boolean>((resolve) => {
    letGo = resolve;
  });
  const state = { reached: false, ended: false };
  let first = true;
  const held = new Proxy(compute, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (property !== 'evacuate') return typeof value === 'function' ? value.bind(target) : value;
      return async (...args: Parameters<ComputeApi['evacuate']>) => {
        if (!first) return target.evacuate(...args);
        first = false;
        state.reached = true;
        try {
          if (!(await decided))
            throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
          return await target.evacuate(...args);
        } finally {
          state.ended = true;
        }
      };
    },
  }) as ComputeApi;
  return { compute: held, state, release: () => letGo(true), drop: () => letGo(false) };
}

/** The instance job of one server of compute1, added for a fenced incident, and its lock key. */
async function oneInstanceJob(test: EvacuationBed) {
  const server = test.sim.addServer({ host: 'compute1', name: 'web' });
  const { incident } = await test.failHost('compute1', { addJob: false });
  const { queue, jobId } = await test.addInstanceJob('compute1', server, incident.id, INSTANCE_JOB_OPTIONS);
  test.onClose(() => queue.close());
  const lockKey = `${bullmqPrefix(test.prefix)}:${JOB_QUEUES.evacuationInstance}:${jobId}:lock`;
  return { server, queue, jobId, lockKey, incidentId: incident.id };
}

async function completed(queue: Awaited<ReturnType<typeof oneInstanceJob>>['queue'], jobId: string) {
  await waitFor(
    'the instance job to complete',
    async () => (await queue.getJobState(jobId)) === 'completed',
    30_000,
    50,
  );
  return (await queue.getJob(jobId))!.returnvalue as EvacuateInstanceJobResult;
}

const OPTIONS = {
  inProcessWorker: false,
  // One job at a time per process: the slow first run keeps its process's only slot.
  instanceHa: { SMART_EVACUATION: 'true', EVACUATION_MAX_THREADS: '1' },
} as const;

describe('an instance job run twice after its lock lapsed', () => {
  it('is evacuated once: the second run finds the first run’s evacuate claim and watches its evacuation', async () => {
    const test = await bed(OPTIONS);
    const { server, queue, jobId, lockKey } = await oneInstanceJob(test);
    const slow = heldFirstEvacuate(test);
    const roles = { LIFEGUARD_EVACUATION_ROLES: 'instances' };
    await test.startWorker(roles, null, { compute: slow.compute, name: 'worker-a' });
    await waitFor('worker-a at its evacuate request', () => slow.state.reached, 20_000, 10);
    // Its job lock lapses (BullMQ's stalled-job check then hands the job to another run).
    await test.redis.del(lockKey);
    await test.startWorker(roles, null, { name: 'worker-b' });
    await waitFor(
      'the second run to decide about its evacuate',
      () =>
        test.sim.evacuateCalls(server.id) > 0 ||
        test.messages('worker-a holds the evacuate claim').length > 0,
      30_000,
      20,
    );
    slow.release();
    await waitFor('worker-a’s evacuate request to end', () => slow.state.ended, 20_000, 10);
    const result = await completed(queue, jobId);
    assert.equal(test.sim.evacuateCalls(server.id), 1, 'evacuated once');
    assert.ok(
      test.messages('job taken over from a worker that stopped answering').length >= 1,
      'the job was handed to another run',
    );
    assert.ok(test.messages('worker-a holds the evacuate claim').length >= 1);
    // The run that completed the job sent nothing: it found the instance evacuated by the other run.
    assert.equal(result.outcome, 'already-evacuated');
    assert.equal(test.events.of('instance.evacuated').length, 1, 'announced once');
    const [now] = test.servers([server.id]);
    assert.notEqual(now!.host, 'compute1');
    assert.equal(now!.vmState, 'active');
    await waitFor('the server unlocked', () => test.servers([server.id])[0]!.locked === false);
  });

  it('is evacuated once when the first run dies between its claim and Nova: the claim runs out, then the second run looks again and evacuates', async () => {
    const test = await bed(OPTIONS);
    const { server, queue, jobId, lockKey, incidentId } = await oneInstanceJob(test);
    const dead = heldFirstEvacuate(test);
    const environment = { LIFEGUARD_EVACUATION_ROLES: 'instances', LIFEGUARD_EVACUATE_CLAIM_SECONDS: '2' };
    await test.startWorker(environment, null, { compute: dead.compute, name: 'worker-a' });
    await waitFor('worker-a at its evacuate request', () => dead.state.reached, 20_000, 10);
    // When worker-a's claim runs out (Redis' clock, the same machine's as the test's).
    const claimKey = `${test.prefix}:evacuation:evacuate-claim:${incidentId}:${server.id}`;
    const claimRunsOut = Number(await test.redis.hget(claimKey, 'expires'));
    await test.redis.del(lockKey);
    await test.startWorker(environment, null, { name: 'worker-b' });
    const result = await completed(queue, jobId);
    // worker-a's request never reached Nova: it is dropped only now, after the second run evacuated.
    dead.drop();
    await waitFor('worker-a’s evacuate request to end', () => dead.state.ended, 20_000, 10);
    assert.equal(result.outcome, 'evacuated');
    assert.equal(test.sim.evacuateCalls(server.id), 1, 'evacuated once');
    const evacuates = test.sim.requests.matching(
      (request) =>
        request.method === 'POST' &&
        request.url.endsWith(`/servers/${server.id}/action`) &&
        (request.body as Record<string, unknown>).evacuate !== undefined,
    );
    assert.equal(evacuates.length, 1);
    assert.ok(evacuates[0]!.receivedAt >= claimRunsOut, 'no evacuate before worker-a’s claim ran out');
    assert.equal(
      test.messages(`Evacuate claim of ${server.id} taken over from worker-a (its claim ran out)`).length,
      1,
      'the second run read Nova again after taking the claim over',
    );
    assert.equal(test.events.of('instance.evacuated').length, 1);
    await waitFor(
      'worker-a to stop without effect',
      () => test.messages("this run's job lock lapsed and another run holds the job").length > 0,
    );
    assert.equal(test.events.of('instance.evacuation.failed').length, 0);
  });
});
