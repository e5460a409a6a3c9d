import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis } from '@lifeguard/testing';
import type { Redis } from 'ioredis';
import { decideKdump, KdumpStore, KdumpWait, kdumpClockChange, kdumpClocksToSettle } from '../src/index.ts';

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

describe("the kdump clock belongs to one failure: what is older than the host's last report is ignored", () => {
  const decide = (fields: {
    lastPacketAt?: Date | null;
    waitStartedAt?: Date | null;
    lastReportAt?: Date | null;
    now: Date;
  }) => decideKdump({ lastPacketAt: null, waitStartedAt: null, kdumpTimeoutSeconds: 30, ...fields });
  const cases: Array<[string, Parameters<typeof decide>[0], string]> = [
    [
      'a clock started before the last report: a new wait',
      { waitStartedAt: start, lastReportAt: later(20), now: later(100) },
      'start-wait',
    ],
    [
      'a clock started at the last report: a new wait',
      { waitStartedAt: start, lastReportAt: start, now: later(100) },
      'start-wait',
    ],
    [
      'a clock started after the last report: timed out',
      { waitStartedAt: later(25), lastReportAt: later(20), now: later(100) },
      'timed-out',
    ],
    [
      'a clock started after the last report: still waiting',
      { waitStartedAt: later(80), lastReportAt: later(20), now: later(100) },
      'waiting',
    ],
    [
      'last report unknown: the clock counts',
      { waitStartedAt: start, lastReportAt: null, now: later(100) },
      'timed-out',
    ],
    [
      'a packet from before the last report: not kdump-fenced',
      { lastPacketAt: later(10), lastReportAt: later(15), now: later(20) },
      'start-wait',
    ],
    [
      'a packet after the last report: kdump-fenced',
      { lastPacketAt: later(16), lastReportAt: later(15), now: later(20) },
      'kdump-fenced',
    ],
  ];
  for (const [name, observation, decision] of cases) {
    it(name, () => assert.equal(decide(observation), decision));
  }

  it('settles the clocks of hosts that report again with no incident; not forced-down, silent, incident or unlisted ones', () => {
    const host = (reporting: boolean, forcedDown = false, incidentOpen = false) => ({
      reporting,
      forcedDown,
      incidentOpen,
    });
    const settled = kdumpClocksToSettle(
      new Map([
        ['back', host(true)],
        ['silent', host(false)],
        ['forced', host(true, true)],
        ['fencing', host(true, false, true)],
        ['unlisted', null],
      ]),
    );
    assert.deepEqual(settled, ['back']);
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

  it('a clock of an earlier failure (the host reported since) is started afresh; a packet during the new wait is honoured', async () => {
    const wait = new KdumpWait(store, 30);
    await wait.step('compute-5', start);
    const reportedAt = later(10);
    const again = await wait.step('compute-5', later(100), reportedAt);
    assert.deepEqual(again, { decision: 'waiting', waitStartedAt: later(100) }, 'a full KDUMP_TIMEOUT again');
    assert.deepEqual(await store.waitStartedAt('compute-5'), later(100));
    assert.equal((await wait.step('compute-5', later(129), reportedAt)).decision, 'waiting');
    await store.recordPacket('compute-5', later(120));
    assert.equal((await wait.step('compute-5', later(125), reportedAt)).decision, 'kdump-fenced');
  });

  it('restarting a stale clock keeps the fresh one another replica wrote first', async () => {
    await store.startWait('compute-6', start);
    assert.deepEqual(await store.restartWait('compute-6', start, later(50)), later(50));
    assert.deepEqual(await store.restartWait('compute-6', start, later(51)), later(50), 'theirs stands');
    assert.deepEqual(await store.allWaitStarts().then((all) => all.get('compute-6')), later(50));
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

  it("the blocking wait (the fencing worker's) ignores a packet from before the host's last report: an earlier crash's", async () => {
    // The host crashed (its packet), rebooted and reported, then failed again.
    const packetAt = new Date(Date.now() - 5_000);
    await store.recordPacket('compute-7', packetAt);
    const lastReportAt = new Date(packetAt.getTime() + 2_000);
    const unaware = await new KdumpWait(store, 30).untilDecided('compute-7', 10);
    assert.deepEqual(
      [unaware.decision, unaware.sleeps],
      ['kdump-fenced', 0],
      'without it the old packet counts',
    );
    await store.clearWait('compute-7');
    let waitingSince: Date | null = null;
    const outcome = await new KdumpWait(store, 30).untilDecided(
      'compute-7',
      10,
      (startedAt) => {
        waitingSince = startedAt;
        void store.recordPacket('compute-7');
      },
      lastReportAt,
    );
    assert.notEqual(waitingSince, null, 'it waited for a packet of this failure');
    assert.equal(outcome.decision, 'kdump-fenced');
    assert.ok(outcome.sleeps >= 1);
  });
});
