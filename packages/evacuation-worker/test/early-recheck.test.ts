import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '@lifeguard/runtime';
import {
  evacuationPolicy,
  type HostRecheck,
  type InstanceEvacuationContext,
  InstanceEvacuator,
  NO_PROGRESS,
  sharedHostRecheck,
} from '../src/index.ts';
import { bedsClosedAfterTests } from './support/evacuation-bed.ts';

// A fresh instance's host re-check is read beside its first look and its lock, and the evacuate goes
// out only once it has ended; a re-check older than a wait is never acted on.

const bed = bedsClosedAfterTests();
const logger = createLogger({ service: 'early-recheck-test', level: 'silent' });

async function setUp() {
  const test = await bed({ inProcessWorker: false });
  const server = test.sim.addServer({ host: 'compute1', name: 'web' });
  const { incident } = await test.failHost('compute1', { addJob: false });
  const evacuator = new InstanceEvacuator(
    test.nova,
    {
      policy: evacuationPolicy(test.config),
      firstCheckMilliseconds: 50,
      pollMilliseconds: 50,
      migrationWindowMinutes: 60,
    },
    logger,
  );
  const target = {
    instanceId: server.id,
    instanceName: server.name,
    failedHost: 'compute1',
    originalStatus: 'ACTIVE',
    targetHost: null,
    fencedAt: new Date(incident.fence!.at),
  };
  const context = (recheckHost: () => Promise<HostRecheck>): InstanceEvacuationContext => ({
    progress: NO_PROGRESS,
    saveProgress: async () => undefined,
    shouldStop: async () => false,
    recheckHost,
  });
  const locked = () => test.sim.model.servers.get(server.id)!.locked;
  return { test, server, evacuator, target, context, locked };
}

describe('the host re-check of a fresh instance', () => {
  it('starts before the server is locked and ends before the evacuate is sent', async () => {
    const { test, server, evacuator, target, context, locked } = await setUp();
    const seen: Array<{ lockedAtStart: boolean; evacuatesAtEnd: number }> = [];
    const result = await evacuator.evacuate(
      target,
      context(async () => {
        const lockedAtStart = locked();
        // Held until the lock is in place: the evacuate must still wait for this re-check.
        while (!locked()) await new Promise((resolve) => setTimeout(resolve, 5));
        seen.push({ lockedAtStart, evacuatesAtEnd: test.sim.evacuateCalls(server.id) });
        return { kind: 'go' };
      }),
    );
    assert.equal(result.outcome, 'accepted');
    assert.deepEqual(
      seen,
      [{ lockedAtStart: false, evacuatesAtEnd: 0 }],
      'one re-check, read beside the lock',
    );
    assert.equal(test.sim.evacuateCalls(server.id), 1);
  });

  it('that refuses fails the instance with nothing sent', async () => {
    const { test, server, evacuator, target, context } = await setUp();
    await assert.rejects(
      evacuator.evacuate(
        target,
        context(async () => ({ kind: 'refuse', reason: 'the host is not down: compute1 reports to Nova' })),
      ),
      /compute1 may no longer be evacuated: the host is not down/,
    );
    assert.equal(test.sim.evacuateCalls(server.id), 0);
  });

  it('that defers is not acted on after the wait: the world is read again before the evacuate', async () => {
    const { test, server, evacuator, target, context } = await setUp();
    const verdicts: HostRecheck[] = [
      { kind: 'defer', reason: 'THRESHOLD exceeded' },
      { kind: 'refuse', reason: 'incident closed meanwhile' },
    ];
    let rechecks = 0;
    await assert.rejects(
      evacuator.evacuate(
        target,
        context(async () => verdicts[Math.min(rechecks++, verdicts.length - 1)]!),
      ),
      /compute1 may no longer be evacuated: incident closed meanwhile/,
    );
    assert.equal(rechecks, 2, 'the deferral, then a fresh look after the wait');
    assert.equal(test.sim.evacuateCalls(server.id), 0);
  });
});

describe('sharedHostRecheck: the instance jobs of one incident share a look in flight', () => {
  /** A re-check whose looks the test ends one by one. */
  function controlled() {
    const looks: Array<{ incidentId: string; end: (verdict: HostRecheck | Error) => void }> = [];
    const recheck = sharedHostRecheck(
      (data) =>
        new Promise<HostRecheck>((resolve, reject) => {
          looks.push({
            incidentId: data.incidentId,
            end: (verdict) => (verdict instanceof Error ? reject(verdict) : resolve(verdict)),
          });
        }),
    );
    return { looks, recheck };
  }
  const one = { host: 'compute1', incidentId: 'compute1.20261207T000000Z.aaaa' };
  const other = { host: 'compute2', incidentId: 'compute2.20261207T000000Z.bbbb' };

  it('answers every caller that asks while a look is under way with that look', async () => {
    const { looks, recheck } = controlled();
    const answers = [recheck(one), recheck(one), recheck(one)];
    assert.equal(looks.length, 1, 'one look for three callers');
    looks[0]!.end({ kind: 'go' });
    assert.deepEqual(await Promise.all(answers), [{ kind: 'go' }, { kind: 'go' }, { kind: 'go' }]);
  });

  it('never hands out a finished look: the next caller reads the world again', async () => {
    const { looks, recheck } = controlled();
    const first = recheck(one);
    looks[0]!.end({ kind: 'go' });
    await first;
    const second = recheck(one);
    assert.equal(looks.length, 2, 'a new look after the first ended');
    looks[1]!.end({ kind: 'refuse', reason: 'the host is not down' });
    assert.deepEqual(await second, { kind: 'refuse', reason: 'the host is not down' });
  });

  it('keeps incidents apart, and a failed look is not kept', async () => {
    const { looks, recheck } = controlled();
    const mine = recheck(one);
    const theirs = recheck(other);
    assert.deepEqual(
      looks.map((look) => look.incidentId),
      [one.incidentId, other.incidentId],
    );
    looks[0]!.end(new Error('Nova answered 503'));
    looks[1]!.end({ kind: 'go' });
    await assert.rejects(mine, /Nova answered 503/);
    assert.deepEqual(await theirs, { kind: 'go' });
    const again = recheck(one);
    assert.equal(looks.length, 3, 'the failure is not handed out again');
    looks[2]!.end({ kind: 'go' });
    assert.deepEqual(await again, { kind: 'go' });
  });
});
