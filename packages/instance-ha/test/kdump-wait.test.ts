import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis } from '@lifeguard/testing';
import type { Redis } from 'ioredis';
import { decideKdump, KdumpStore, KdumpWait, kdumpClockChange } from '../src/index.ts';

const start = new Date('2026-07-28T10:00:00Z');
const later = (seconds: number) => new Date(start.getTime() + seconds * 1000);

describe('the kdump wait state machine (docs/instance-ha-rules.md#kdump)', () => {
  it('starts the clock, waits, then times out KDUMP_TIMEOUT after the start; a timed-out wait keeps its clock', () => {
    const decide = (waitStartedAt: Date | null, now: Date) =>
      decideKdump({ lastPacketAt: null, waitStartedAt, now, kdumpTimeoutSeconds: 30 });
    assert.deepEqual(
      [decide(null, start), decide(start, later(29)), decide(start, later(30))],
      ['start-wait', 'waiting', 'timed-out'],
    );
    assert.deepEqual(
      (['start-wait', 'waiting', 'timed-out', 'kdump-fenced'] as const).map(kdumpClockChange),
      ['start', 'keep', 'keep', 'clear'],
    );
  });
});

describe('KdumpWait on the shared Redis clock', () => {
  let redis: Redis;
  let store: KdumpStore;
  const prefix = randomKeyPrefix('kdump-wait');

  before(() => {
    redis = testRedis();
    store = new KdumpStore(redis, prefix);
  });
  after(async () => {
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  it('a second party (the fencing worker after the monitor) continues the clock the first one started', async () => {
    const monitor = new KdumpWait(store, 30);
    const fencing = new KdumpWait(store, 30);
    assert.deepEqual(await monitor.step('compute-1', start), { decision: 'waiting', waitStartedAt: start });
    assert.equal((await monitor.step('compute-1', later(31))).decision, 'timed-out');
    const handedOn = await fencing.step('compute-1', later(32));
    assert.deepEqual(handedOn, { decision: 'timed-out', waitStartedAt: start }, 'no second wait');
    await fencing.settle('compute-1');
    assert.equal(await store.waitStartedAt('compute-1'), null, 'settled once the fence is recorded');
  });

  it('a packet while waiting makes the host kdump-fenced and clears the clock', async () => {
    const wait = new KdumpWait(store, 30);
    await wait.step('compute-2', start);
    await store.recordPacket('compute-2', later(10));
    assert.deepEqual(await wait.step('compute-2', later(12)), {
      decision: 'kdump-fenced',
      waitStartedAt: null,
    });
    assert.equal(await store.waitStartedAt('compute-2'), null);
  });

  it('the blocking wait decides at its first look, without sleeping, when the clock ran out already', async () => {
    await store.startWait('compute-3', new Date(Date.now() - 60_000));
    const outcome = await new KdumpWait(store, 30).untilDecided('compute-3', 10);
    assert.deepEqual([outcome.decision, outcome.sleeps], ['timed-out', 0]);
  });

  it('the blocking wait sleeps until a packet arrives, and tells when it started waiting', async () => {
    let waitingSince: Date | null = null;
    const outcome = await new KdumpWait(store, 30).untilDecided('compute-4', 10, (startedAt) => {
      waitingSince = startedAt;
      void store.recordPacket('compute-4');
    });
    assert.equal(outcome.decision, 'kdump-fenced');
    assert.ok(outcome.sleeps >= 1, 'it slept at least once');
    assert.notEqual(waitingSince, null);
  });
});
