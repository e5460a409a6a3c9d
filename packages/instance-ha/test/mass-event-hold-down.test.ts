// The mass-event hold-down (docs/instance-ha-rules.md#mass-event-hold-down): its two rules by table,
// then whole sequences of poll cycles through `admit`, each cycle fed the holds the last one left.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Server } from '@lifeguard/openstack';
import {
  type AdmissionDecision,
  admit,
  INITIAL_HEARTBEAT_CLIFF,
  type InstanceHaConfig,
  judgeMassEventHoldDown,
  type KdumpClock,
  loadInstanceHaConfig,
  type MassEventHold,
  type MassEventHolds,
  NO_MASS_EVENT_HOLDS,
  nextMassEventHolds,
  type ServiceView,
} from '../src/index.ts';
import { categorisedAt, novaTime, serviceView } from './support/service-view.ts';

const start = new Date('2026-12-03T10:00:00Z');
const at = (seconds: number) => new Date(start.getTime() + seconds * 1000);

const config = (env: Record<string, string> = {}): InstanceHaConfig =>
  loadInstanceHaConfig({
    path: '/nonexistent/config.yaml',
    env: { THRESHOLD: '50', TAGGED_AGGREGATES: 'false', DELTA: '10', ...env },
    allowBelowMinimum: true,
  }).config;

/** A failed service at `now` (last report 60 s before it). */
const failed = (host: string, now: Date) =>
  serviceView(host, now, { state: 'down', updated_at: novaTime(new Date(now.getTime() - 60_000)) });
const settings = { holdDownSeconds: 20, checkKdump: false, kdumpTimeoutSeconds: 30 };
const hold = (fields: Partial<MassEventHold> = {}): MassEventHold => ({
  gate: 'all-services-stale',
  heldSince: at(0),
  clearedAt: null,
  ...fields,
});

describe('judgeMassEventHoldDown', () => {
  const cases: Array<
    [string, MassEventHold | null, Date, { released: boolean; cleared: boolean; until?: Date }]
  > = [
    ['a host no mass event held goes on', null, at(30), { released: true, cleared: false }],
    [
      'its block cleared this cycle: held for the hold-down from now',
      hold(),
      at(15),
      { released: false, cleared: true, until: at(35) },
    ],
    [
      'cleared earlier, the hold-down not over: still held',
      hold({ clearedAt: at(15) }),
      at(34),
      { released: false, cleared: false, until: at(35) },
    ],
    [
      'silent for the whole hold-down after the block cleared: goes on',
      hold({ clearedAt: at(15) }),
      at(35),
      { released: true, cleared: false },
    ],
  ];
  for (const [name, given, now, expected] of cases) {
    it(name, () => {
      const service = failed('c-1', now);
      const holds: MassEventHolds = given ? new Map([['c-1', given]]) : NO_MASS_EVENT_HOLDS;
      const judgement = judgeMassEventHoldDown([service], holds, settings, new Map(), now);
      assert.deepEqual(
        judgement.released.map((each) => each.host),
        expected.released ? ['c-1'] : [],
      );
      assert.deepEqual(judgement.clearedNow, expected.cleared ? ['c-1'] : []);
      if (expected.until)
        assert.deepEqual(judgement.held, [
          { host: 'c-1', gate: 'all-services-stale', until: expected.until },
        ]);
    });
  }

  it('with CHECK_KDUMP, a held host whose crash kernel sent fence_kdump since its last report goes on at once; an older packet does not count', () => {
    const now = at(16);
    const service = failed('c-1', now);
    const holds = new Map([['c-1', hold({ clearedAt: at(15) })]]);
    const kdump = { ...settings, checkKdump: true };
    const clock = (lastPacketAt: Date): ReadonlyMap<string, KdumpClock> =>
      new Map([['c-1', { lastPacketAt, waitStartedAt: null }]]);
    const fresh = judgeMassEventHoldDown([service], holds, kdump, clock(at(14)), now);
    assert.deepEqual(fresh.released, [service]);
    const beforeItsLastReport = judgeMassEventHoldDown([service], holds, kdump, clock(at(-100)), now);
    assert.deepEqual(beforeItsLastReport.released, []);
    const withoutCheckKdump = judgeMassEventHoldDown([service], holds, settings, clock(at(14)), now);
    assert.deepEqual(withoutCheckKdump.released, []);
  });
});

describe('nextMassEventHolds', () => {
  const none = {
    blocked: [],
    stillFailed: new Set<string>(),
    clearedNow: [],
    admitted: new Set<string>(),
    now: at(10),
  };
  it('holds every host a mass gate blocked, keeps when it was first held, and forgets a clearing when blocked again', () => {
    const previous = new Map([['c-1', hold({ clearedAt: at(5) })]]);
    const next = nextMassEventHolds(previous, {
      ...none,
      blocked: [
        { gate: 'threshold', hosts: ['c-1', 'c-2'] },
        { gate: 'rate-limit', hosts: ['c-3'] },
        { gate: 'kdump-wait', hosts: ['c-4'] },
      ],
      stillFailed: new Set(['c-1', 'c-2', 'c-3', 'c-4']),
    });
    assert.deepEqual(
      [...next],
      [
        ['c-1', { gate: 'threshold', heldSince: at(0), clearedAt: null }],
        ['c-2', { gate: 'threshold', heldSince: at(10), clearedAt: null }],
      ],
    );
  });

  it('starts the hold-down of a host whose block cleared now; lets go of one that reports again or was admitted', () => {
    const previous = new Map([
      ['c-1', hold()],
      ['c-2', hold()],
      ['c-3', hold({ clearedAt: at(5) })],
    ]);
    const next = nextMassEventHolds(previous, {
      ...none,
      stillFailed: new Set(['c-1', 'c-3']),
      clearedNow: ['c-1'],
      admitted: new Set(['c-3']),
    });
    assert.deepEqual([...next], [['c-1', hold({ clearedAt: at(10) })]]);
  });

  it('restarts the hold-down of every cleared host when a held host comes back; a blocked one stays blocked', () => {
    const previous = new Map([
      ['c-1', hold({ clearedAt: at(5) })],
      ['c-2', hold({ clearedAt: at(5) })],
      ['c-3', hold()],
    ]);
    const cameBack = nextMassEventHolds(previous, { ...none, stillFailed: new Set(['c-1', 'c-3']) });
    assert.deepEqual(
      [...cameBack],
      [
        ['c-1', hold({ clearedAt: at(10) })],
        ['c-3', hold()],
      ],
    );
    const nobodyBack = nextMassEventHolds(previous, { ...none, stillFailed: new Set(['c-1', 'c-2', 'c-3']) });
    assert.deepEqual([...nobodyBack], [...previous], 'no host came back: the hold-downs run on');
    const admittedOnly = nextMassEventHolds(previous, {
      ...none,
      stillFailed: new Set(['c-1', 'c-2', 'c-3']),
      admitted: new Set(['c-2']),
    });
    assert.deepEqual(
      admittedOnly.get('c-1'),
      hold({ clearedAt: at(5) }),
      'an admitted host did not come back',
    );
  });
});

describe('a whole cloud cut off, coming back in waves (12 hosts, THRESHOLD 50, DELTA 10, hold-down 2 × DELTA)', () => {
  const hosts = Array.from({ length: 12 }, (_, index) => `compute-${String(index + 1).padStart(2, '0')}`);

  /** One poll cycle at `seconds`: the `silent` hosts failed, the others reporting. */
  function cycle(
    seconds: number,
    silent: ReadonlyArray<string>,
    holds: MassEventHolds,
    cfg = config(),
    quiet: ReadonlyArray<string> = [],
  ) {
    const now = at(seconds);
    const services: ServiceView[] = hosts.map((host) => {
      if (silent.includes(host)) return failed(host, now);
      // Silent past THRESHOLD_SUSPECT_AGE (5 s), not yet past DELTA (10 s): Nova still says up.
      if (quiet.includes(host))
        return serviceView(host, now, { updated_at: novaTime(new Date(now.getTime() - 7_000)) });
      return serviceView(host, now);
    });
    const categorisation = categorisedAt(services, now, cfg.deltaSeconds);
    return admit({
      now,
      categorisation,
      openIncidents: new Map(),
      config: cfg,
      fencingToken: 1,
      heartbeats: null,
      heartbeatCliff: INITIAL_HEARTBEAT_CLIFF,
      massEventHolds: holds,
      candidateFacts: {
        servers: new Map(silent.map((host) => [host, [{ id: `vm-${host}` } as unknown as Server]])),
        context: {
          tag: cfg.evacuableTag,
          taggedImages: false,
          taggedFlavors: false,
          evacuableImageIds: new Set(),
          evacuableFlavors: { ids: new Set(), names: new Set() },
        },
        aggregates: null,
        schedulers: [{ state: 'up' }],
        kdumpClocks: new Map(),
      },
    });
  }

  /** Runs cycles every 5 s from 0, `silentAt(seconds)` hosts silent in each; the decisions in order. */
  function run(until: number, silentAt: (seconds: number) => ReadonlyArray<string>): AdmissionDecision[] {
    const decisions: AdmissionDecision[] = [];
    let holds: MassEventHolds = NO_MASS_EVENT_HOLDS;
    for (let seconds = 0; seconds <= until; seconds += 5) {
      const decision = cycle(seconds, silentAt(seconds), holds);
      decisions.push(decision);
      holds = decision.massEventHolds;
    }
    return decisions;
  }
  /**
   * Each host in the order it was first admitted (the cycles feed no incidents back, so an admitted
   * host is admitted again in later cycles, where the node monitor's de-duplication would stop it).
   */
  const admitted = (decisions: AdmissionDecision[]) => [
    ...new Set(decisions.flatMap((decision) => decision.admitted.map((each) => each.service.host))),
  ];
  /** Two hosts come back every 5 s from 5 s on: compute-01 and -02 first, compute-11 and -12 last. */
  const waves = (seconds: number) => hosts.slice(Math.max(0, Math.floor(seconds / 5)) * 2);

  it('admits nothing: the last hosts, silent when the block cleared, come back within the hold-down', () => {
    const decisions = run(40, waves);
    assert.deepEqual(admitted(decisions), []);
    assert.equal(decisions[0]!.stoppedBy, 'all-services-stale');
    assert.equal(decisions[1]!.stoppedBy, 'threshold');
    // At 15 s, 6 of 12 silent (50 %, not over THRESHOLD): the block clears, and they are held.
    const cleared = decisions[3]!;
    assert.equal(cleared.stoppedBy, null);
    const held = cleared.blocked.find((block) => block.gate === 'mass-event-hold-down');
    assert.deepEqual(held?.hosts, hosts.slice(6));
    assert.match(
      held!.reason,
      /MASS_EVENT_HOLD_DOWN 20s after the block cleared or the event's last host came back/,
    );
    assert.match(held!.reason, /compute-12 until 2026-12-03T10:00:35\.000Z/);
    assert.deepEqual([...decisions.at(-1)!.massEventHolds.keys()], [], 'nothing held once all report');
  });

  it('admits nothing when the waves come further apart than the hold-down, as long as they keep coming', () => {
    // Two hosts back every 15 s (the CLI's pace on a busy machine): the block clears at 45 s with six
    // silent, and the last wave comes 45 s later, well past a 20 s hold-down counted from the clearing.
    const slowWaves = (seconds: number) => hosts.slice(Math.max(0, Math.floor(seconds / 15)) * 2);
    const decisions = run(100, slowWaves);
    assert.deepEqual(admitted(decisions), []);
    assert.deepEqual([...decisions.at(-1)!.massEventHolds.keys()], [], 'nothing held once all report');
  });

  it('a host that really died in the outage is still handled, alone, once the hold-down is over', () => {
    const decisions = run(55, (seconds) => [...new Set([...waves(seconds), 'compute-07'])]);
    assert.deepEqual(admitted(decisions), ['compute-07']);
    const when = decisions.findIndex((decision) => decision.admitted.length > 0) * 5;
    assert.equal(when, 50, 'admitted at the first poll 20 s after the last wave came back, at 30 s');
  });

  it('a host that fails on its own, never part of a mass event, is admitted in its first cycle', () => {
    const decisions = run(10, (seconds) => (seconds >= 5 ? ['compute-03'] : []));
    assert.deepEqual(admitted(decisions), ['compute-03']);
    assert.deepEqual(
      decisions[1]!.admitted.map((each) => each.service.host),
      ['compute-03'],
      'admitted in the cycle it failed',
    );
  });

  it('holds a host that was only silent (not yet past DELTA) when the mass gate blocked, once it fails as the rest come back', () => {
    // 0 s: 8 hosts past DELTA and 4 silent for 7 s: all 12 look failed. 5 s: the 8 report again and
    // the 4 are past DELTA (4 of 12, within THRESHOLD): the block clears, and the 4 are held.
    const first = cycle(0, hosts.slice(0, 8), NO_MASS_EVENT_HOLDS, config(), hosts.slice(8));
    assert.equal(first.stoppedBy, 'all-services-stale');
    assert.deepEqual(first.blocked.find((block) => block.gate === 'all-services-stale')?.hosts, hosts);
    const second = cycle(5, hosts.slice(8), first.massEventHolds);
    assert.deepEqual(second.admitted, [], 'nothing fenced as the event ends');
    assert.deepEqual(
      second.blocked.find((block) => block.gate === 'mass-event-hold-down')?.hosts,
      hosts.slice(8),
    );
  });

  it('MASS_EVENT_HOLD_DOWN sets the hold-down; 0 (the default) is 2 × DELTA', () => {
    assert.equal(config().massEventHoldDownSeconds, 20);
    assert.equal(config({ MASS_EVENT_HOLD_DOWN: '45' }).massEventHoldDownSeconds, 45);
    assert.equal(config({ DELTA: '30' }).massEventHoldDownSeconds, 60);
  });
});
