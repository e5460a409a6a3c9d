// The advice on a fence not proven yet, from the facts as they are now: a table over the pure rule,
// then the fence job read from a real BullMQ queue in each state the table names.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { fencingJobId, JOB_QUEUES } from '@lifeguard/contracts';
import { bullmqPrefix } from '@lifeguard/runtime';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis, waitFor } from '@lifeguard/testing';
import { Queue, Worker } from 'bullmq';
import { type FenceJobView, type FencingFacts, fencingAdviceOf, readFenceJob } from '../src/index.ts';

const now = new Date('2026-12-03T10:00:00Z');
const incident = (state: string, fenced = false) => ({ id: 'compute3.inc', host: 'compute3', state, fenced });
const job = (fields: Partial<FenceJobView>): FenceJobView => ({
  state: 'failed',
  attemptsMade: 3,
  attempts: 3,
  retryAt: null,
  lockHeld: null,
  ...fields,
});
const silent = { reporting: false, evidence: ['Nova: state down, updated_at 95 s ago (DELTA 30 s)'] };
const reporting = {
  reporting: true,
  evidence: ['Nova: state up, updated_at 2 s ago (DELTA 30 s): nova-compute is reporting'],
};

describe('fencingAdviceOf: what to do about a fence not proven yet', () => {
  const cases: Array<[string, ReturnType<typeof incident>, FencingFacts, string | null, RegExp | null]> = [
    ['a fenced incident needs none', incident('evacuating', true), {}, null, null],
    ['an open incident with no hold needs none', incident('open'), { heldBack: null, now }, null, null],
    [
      'no room left: the fence is held back, nothing is powered off, and what makes room',
      incident('open'),
      {
        heldBack: {
          at: '2026-12-03T09:59:50.000Z',
          serverCount: 2,
          reason:
            'no compute host can take the 2 server(s) of compute3: of 3 other compute host(s), 3 disabled',
        },
        now,
      },
      'make-room',
      /holds back the fence of compute3 since 2026-12-03 09:59:50Z: no compute host can take the 2 server\(s\) of compute3[\s\S]*Nothing is powered off[\s\S]*openstack compute service set --enable <host> nova-compute/,
    ],
    [
      'room appeared and fencing began: the hold is over',
      incident('fencing'),
      {
        heldBack: { at: '2026-12-03T09:59:50.000Z', serverCount: 2, reason: 'no compute host' },
        job: job({ state: 'active', attemptsMade: 0, lockHeld: true }),
        reporting: silent,
        now,
      },
      'wait',
      /A fencing worker is fencing compute3 now/,
    ],
    ['an incident past fencing needs none', incident('evacuating'), {}, null, null],
    [
      'between automatic retries: wait, and when the next attempt is due',
      incident('fencing'),
      {
        job: job({ state: 'delayed', attemptsMade: 1, retryAt: '2026-12-03T10:00:11.000Z' }),
        reporting: silent,
        now,
      },
      'wait',
      /failed on attempt 1 of 3; lifeguard tries again by itself at 2026-12-03 10:00:11Z \(in 11\.0 s\)/,
    ],
    [
      "a dead worker's job waiting to be taken over: wait for the takeover",
      incident('fencing'),
      { job: job({ state: 'active', attemptsMade: 1, lockHeld: false }), reporting: silent, now },
      'wait',
      /stopped answering \(attempt 1 of 3\); another fencing worker takes the job over/,
    ],
    [
      'a worker fencing now: wait',
      incident('fencing'),
      { job: job({ state: 'active', attemptsMade: 0, lockHeld: true }), reporting: silent, now },
      'wait',
      /A fencing worker is fencing compute3 now/,
    ],
    [
      'the host reports again: rehabilitate, never confirm-fenced',
      incident('failed'),
      { job: job({}), reporting, now },
      'rehabilitate',
      /lifeguard host rehabilitate compute3 --operator <your name>/,
    ],
    [
      'the host came back while a retry is pending: rehabilitate',
      incident('fencing'),
      { job: job({ state: 'delayed', attemptsMade: 2 }), reporting, now },
      'rehabilitate',
      /reports again \(Nova: state up/,
    ],
    [
      'every attempt failed and the host is silent: confirm-fenced',
      incident('failed'),
      { job: job({}), reporting: silent, now },
      'confirm-fenced',
      /all 3 attempts failed\): nothing is evacuated until it is fenced/,
    ],
    [
      'no fence job and nothing known of the host: confirm-fenced (what the incident says)',
      incident('failed'),
      {},
      'confirm-fenced',
      /lifeguard host confirm-fenced compute3 --operator <your name>/,
    ],
  ];
  for (const [name, given, facts, kind, text] of cases) {
    it(name, () => {
      const advice = fencingAdviceOf(given, facts);
      assert.equal(advice?.kind ?? null, kind);
      if (text) assert.match(advice!.lines.join('\n'), text);
      if (kind !== 'confirm-fenced' && advice) {
        assert.doesNotMatch(
          advice.lines.join('\n'),
          /lifeguard host confirm-fenced/,
          'no confirm-fenced command',
        );
      }
    });
  }
});

describe("readFenceJob: the fence job's state in a real BullMQ queue", () => {
  const redis = testRedis();
  const prefix = randomKeyPrefix('fence-job');
  const queue = new Queue(JOB_QUEUES.fencing, { connection: redis, prefix: bullmqPrefix(prefix) });
  const workers: Worker[] = [];
  after(async () => {
    await Promise.all(workers.map((worker) => worker.close(true)));
    await queue.close();
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });
  const worker = (processor: () => Promise<void>) => {
    const started = new Worker(JOB_QUEUES.fencing, processor, {
      connection: redis.duplicate({ maxRetriesPerRequest: null }),
      prefix: bullmqPrefix(prefix),
      lockDuration: 60_000,
    });
    workers.push(started);
    return started;
  };

  it('is null for an incident without a fence job', async () => {
    assert.equal(await readFenceJob(redis, prefix, 'compute9', 'compute9.none'), null);
  });

  it('gives a failed attempt waiting for its retry as delayed, with when the retry is due', async () => {
    const id = fencingJobId('compute1', 'compute1.inc');
    const failing = worker(async () => {
      throw new Error('BMC not reachable');
    });
    const added = Date.now();
    await queue.add(
      'fence',
      { host: 'compute1' },
      { jobId: id, attempts: 3, backoff: { type: 'fixed', delay: 60_000 } },
    );
    const view = await waitFor('the retry to be scheduled', async () => {
      const read = await readFenceJob(redis, prefix, 'compute1', 'compute1.inc');
      return read?.state === 'delayed' ? read : undefined;
    });
    await failing.close(true);
    assert.deepEqual([view.attemptsMade, view.attempts, view.lockHeld], [1, 3, null]);
    const due = Date.parse(view.retryAt!);
    assert.ok(
      due >= added + 60_000 && due <= Date.now() + 60_000,
      `due ${view.retryAt}: 60 s after the failed attempt`,
    );
  });

  it('gives a running job as active with its lock held, and without the lock once its worker is gone', async () => {
    const id = fencingJobId('compute2', 'compute2.inc');
    let release: () => void = () => undefined;
    worker(
      () =>
        new Promise<void>((resolve) => {
          release = resolve;
        }),
    );
    await queue.add('fence', { host: 'compute2' }, { jobId: id, attempts: 3 });
    const running = await waitFor('the job to run', async () => {
      const read = await readFenceJob(redis, prefix, 'compute2', 'compute2.inc');
      return read?.state === 'active' ? read : undefined;
    });
    assert.equal(running.lockHeld, true);
    // The worker process dies: its lock is no longer renewed and expires (here: removed).
    await redis.del(`${queue.toKey(id)}:lock`);
    const orphaned = await readFenceJob(redis, prefix, 'compute2', 'compute2.inc');
    assert.deepEqual([orphaned?.state, orphaned?.lockHeld], ['active', false]);
    release();
  });
});
