import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Aggregate, Server } from '@lifeguard/openstack';
import {
  ACTION_GATES,
  ADMISSION_GATE_ORDER,
  type AdmissionSnapshot,
  admissionCandidates,
  admit,
  type CandidateFacts,
  CandidateFactsMissingError,
  type GateSnapshot,
  hostsToRead,
  INITIAL_HEARTBEAT_CLIFF,
  type Incident,
  type InstanceHaConfig,
  judgeEvacuability,
  judgeKdumpWaits,
  judgeSchedulers,
  type KdumpClock,
  loadInstanceHaConfig,
  NO_MASS_EVENT_HOLDS,
  runGates,
  type ServiceView,
  thresholdGate,
} from '../src/index.ts';
import { categorisedAt, novaTime, serviceView } from './support/service-view.ts';

const now = new Date('2026-12-03T10:00:00Z');
const secondsAgo = (seconds: number) => new Date(now.getTime() - seconds * 1000);

function configWith(env: Record<string, string> = {}): InstanceHaConfig {
  return loadInstanceHaConfig({
    path: '/nonexistent/config.yaml',
    env: { THRESHOLD: '50', TAGGED_AGGREGATES: 'false', DELTA: '30', ...env },
  }).config;
}

const server = (host: string): Server =>
  ({ id: `server-of-${host}`, name: `vm-${host}` }) as unknown as Server;
const down = (host: string, fields: Record<string, unknown> = {}) =>
  serviceView(host, now, { state: 'down', updated_at: novaTime(secondsAgo(60)), ...fields });
const up = (host: string) => serviceView(host, now);
const aggregate = (name: string, hosts: string[], metadata: Record<string, string>): Aggregate =>
  ({ id: 1, name, hosts, metadata, availability_zone: null }) as unknown as Aggregate;

interface World {
  readonly services: ReadonlyArray<ServiceView>;
  readonly config?: InstanceHaConfig;
  readonly openIncidents?: ReadonlyMap<string, Incident>;
  readonly heartbeats?: ReadonlyMap<string, Date>;
  readonly aggregates?: ReadonlyArray<Aggregate> | null;
  readonly schedulers?: CandidateFacts['schedulers'];
  readonly kdumpClocks?: ReadonlyMap<string, KdumpClock>;
  /** Hosts whose server list is empty (every other failed host has one server). */
  readonly empty?: ReadonlyArray<string>;
}

/** The services as GET /os-services returns them, categorised at `now`. */
function categorised(world: World, config: InstanceHaConfig) {
  return categorisedAt(world.services, now, config.deltaSeconds);
}

/** The cycle's snapshot as the node monitor reads it: both phases, every failed host's facts. */
function snapshotOf(world: World): AdmissionSnapshot {
  const config = world.config ?? configWith();
  const categorisation = categorised(world, config);
  const servers = new Map<string, Server[] | null>(
    categorisation.freshFailures.map(({ service }) => [
      service.host,
      world.empty?.includes(service.host) ? [] : [server(service.host)],
    ]),
  );
  return {
    now,
    categorisation,
    openIncidents: world.openIncidents ?? new Map(),
    config,
    fencingToken: 1,
    heartbeats: world.heartbeats ? { last: world.heartbeats, listeningSince: secondsAgo(3600) } : null,
    heartbeatCliff: INITIAL_HEARTBEAT_CLIFF,
    massEventHolds: NO_MASS_EVENT_HOLDS,
    candidateFacts: {
      servers,
      context: {
        tag: config.evacuableTag,
        taggedImages: false,
        taggedFlavors: false,
        evacuableImageIds: new Set(),
        evacuableFlavors: { ids: new Set(), names: new Set() },
      },
      aggregates: world.aggregates ?? null,
      schedulers: world.schedulers ?? [{ state: 'up' }],
      kdumpClocks: world.kdumpClocks ?? new Map(),
    },
  };
}

/** The same world as an action's re-check reads it. */
function gateSnapshotOf(world: World): GateSnapshot {
  const snapshot = snapshotOf(world);
  return {
    now,
    services: snapshot.categorisation.services,
    openIncidents: snapshot.openIncidents,
    heartbeats: world.heartbeats ?? null,
    aggregates: snapshot.config.taggedAggregates ? (world.aggregates ?? null) : null,
    config: snapshot.config,
  };
}

const admittedHosts = (snapshot: AdmissionSnapshot) =>
  admit(snapshot).admitted.map((each) => each.service.host);

describe('admission: one pure function of the cycle snapshot (docs/instance-ha-rules.md#admission-gates)', () => {
  it('judges the gates in InstanceHA order, THRESHOLD between evacuability and the aggregate limits', () => {
    const decision = admit(snapshotOf({ services: [down('c-0'), up('c-1'), up('c-2'), up('c-3')] }));
    assert.deepEqual(decision.judged, [...ADMISSION_GATE_ORDER]);
    assert.deepEqual(
      decision.admitted.map((each) => [each.service.host, each.resume, each.kdumpFenced]),
      [['c-0', false, false]],
    );
    const order: readonly string[] = ADMISSION_GATE_ORDER;
    assert.equal(order.indexOf('threshold'), order.indexOf('evacuability') + 1);
    assert.equal(order.indexOf('aggregate-threshold'), order.indexOf('threshold') + 1);
  });

  it('reads, writes and remembers nothing: the same snapshot gives the same decision, and the snapshot is left as it was', () => {
    const snapshot = snapshotOf({
      services: [down('c-0'), down('c-1'), up('c-2'), up('c-3'), up('c-4')],
      config: configWith({ CHECK_HEARTBEAT: 'true', CHECK_KDUMP: 'true' }),
      heartbeats: new Map([['c-2', now]]),
    });
    const before = JSON.stringify(snapshot, (_key, value) => (value instanceof Map ? [...value] : value));
    const first = admit(snapshot);
    assert.deepEqual(admit(snapshot), first);
    assert.equal(
      JSON.stringify(snapshot, (_key, value) => (value instanceof Map ? [...value] : value)),
      before,
    );
    assert.deepEqual(snapshot.heartbeatCliff, INITIAL_HEARTBEAT_CLIFF);
  });

  it('two read phases: G0–G4 name the hosts whose facts are read; a cycle without candidates needs none', () => {
    const world = { services: [down('c-0'), up('c-1'), up('c-2'), up('c-3')] };
    const phaseOne = { ...snapshotOf(world), candidateFacts: null };
    assert.deepEqual(hostsToRead(admissionCandidates(phaseOne)), { hosts: ['c-0'], needed: true });
    assert.throws(() => admit(phaseOne), CandidateFactsMissingError);
    const quiet = { ...snapshotOf({ services: [up('c-1'), up('c-2')] }), candidateFacts: null };
    assert.deepEqual(hostsToRead(admissionCandidates(quiet)), { hosts: [], needed: false });
    assert.deepEqual(admit(quiet).admitted, []);
  });

  it('G0–G4 judged before the facts were read (as the node monitor does) decide as admit judging them itself', () => {
    const worlds = [
      { services: [down('c-0'), up('c-1'), up('c-2'), up('c-3')] },
      { services: [down('c-0'), down('c-1'), down('c-2')] },
      {
        services: [down('c-0'), down('c-1'), up('c-2'), up('c-3'), up('c-4')],
        config: configWith({ CHECK_HEARTBEAT: 'true', CHECK_KDUMP: 'true' }),
        heartbeats: new Map([['c-1', now]]),
      },
    ];
    for (const world of worlds) {
      const snapshot = snapshotOf(world);
      const early = admissionCandidates({ ...snapshot, candidateFacts: null });
      assert.deepEqual(admit(snapshot, early), admit(snapshot));
    }
  });

  it("G6 allows 2 of 4 at THRESHOLD 50 with the action gate's verdict and reason", () => {
    const world = { services: [down('c-0'), down('c-1'), up('c-2'), up('c-3')] };
    const decision = admit(snapshotOf(world));
    assert.deepEqual(decision.thresholdJudgement, {
      gate: 'threshold',
      verdict: 'pass',
      reason: '2 of 4 compute hosts impacted (50.0 %, THRESHOLD 50 %)',
    });
    assert.deepEqual(decision.thresholdExceeded, []);
    assert.deepEqual(
      decision.admitted.map((each) => each.service.host),
      ['c-0', 'c-1'],
    );
  });

  it('G6 stops the cycle when a silent suspect makes 3 of 4, with the reason an action on one of them gets', () => {
    const config = configWith();
    const silentFor = (config.thresholdSuspectAgeSeconds + config.deltaSeconds) / 2;
    const world = {
      services: [
        down('c-0'),
        down('c-1'),
        serviceView('c-2', now, { updated_at: novaTime(secondsAgo(silentFor)) }),
        up('c-3'),
      ],
      config,
    };
    const decision = admit(snapshotOf(world));
    assert.equal(decision.stoppedBy, 'threshold');
    assert.deepEqual(decision.admitted, []);
    assert.deepEqual(decision.thresholdExceeded, [
      {
        scope: 'global',
        aggregate: null,
        impacted: 3,
        total: 4,
        percent: 75,
        threshold: 50,
        hosts: ['c-0', 'c-1'],
        impactedHosts: ['c-0', 'c-1', 'c-2'],
      },
    ]);
    assert.deepEqual(thresholdGate.judge(gateSnapshotOf(world), 'c-0'), decision.thresholdJudgement);
  });

  it('G6 is not judged without a surviving failed host', () => {
    const decision = admit(snapshotOf({ services: [down('c-0'), up('c-1')], empty: ['c-0'] }));
    assert.equal(decision.threshold, null);
    assert.deepEqual(decision.blocked, [{ gate: 'not-evacuable', hosts: ['c-0'], reason: 'no-servers' }]);
  });
});

describe('admission and the re-checks agree on the same snapshot', () => {
  const six = (changed: Record<string, ServiceView>) =>
    ['c1', 'c2', 'c3', 'c4', 'c5', 'c6'].map((host) => changed[host] ?? up(host));
  const rack = (maxFailures: string) =>
    aggregate('rack', ['c1', 'c2', 'c3', 'c4', 'c5', 'c6'], {
      evacuable: 'true',
      'instanceha:max_failures': maxFailures,
    });
  const tagged = configWith({ TAGGED_AGGREGATES: 'true', THRESHOLD: '100' });
  const heartbeat = configWith({ CHECK_HEARTBEAT: 'true' });
  // Each row: a world whose failed hosts have servers (the admission-only gates G0, G5, G8–G10 let them
  // through), and the hosts both must act on.
  const rows: Array<[string, World, string[]]> = [
    ['one of six down', { services: six({ c1: down('c1') }) }, ['c1']],
    [
      'three of six down at THRESHOLD 50: both act',
      { services: six({ c1: down('c1'), c2: down('c2'), c3: down('c3') }) },
      ['c1', 'c2', 'c3'],
    ],
    [
      'four of six down at THRESHOLD 50: both defer',
      { services: six({ c1: down('c1'), c2: down('c2'), c3: down('c3'), c4: down('c4') }) },
      [],
    ],
    [
      'DISABLED: both defer',
      { services: six({ c1: down('c1') }), config: configWith({ DISABLED: 'true' }) },
      [],
    ],
    [
      'three down in an aggregate of max_failures 2: both defer',
      {
        services: six({ c1: down('c1'), c2: down('c2'), c3: down('c3') }),
        config: tagged,
        aggregates: [rack('2')],
      },
      [],
    ],
    [
      'three down in an aggregate of max_failures 3: both act',
      {
        services: six({ c1: down('c1'), c2: down('c2'), c3: down('c3') }),
        config: tagged,
        aggregates: [rack('3')],
      },
      ['c1', 'c2', 'c3'],
    ],
    [
      'a down host that still sends heartbeats: neither acts; a silent one: both',
      {
        services: six({ c1: down('c1'), c2: down('c2') }),
        config: heartbeat,
        heartbeats: new Map([
          ['c1', secondsAgo(5)],
          ['c2', secondsAgo(600)],
          ['c3', now],
          ['c4', now],
          ['c5', now],
          ['c6', now],
        ]),
      },
      ['c2'],
    ],
  ];
  for (const [name, world, acting] of rows) {
    it(name, () => {
      assert.deepEqual(admittedHosts(snapshotOf(world)), acting, 'admission');
      const view = gateSnapshotOf(world);
      const failed = snapshotOf(world).categorisation.freshFailures.map(({ service }) => service.host);
      for (const host of failed) {
        const recheck = runGates(ACTION_GATES, view, host);
        assert.equal(
          recheck.verdict === 'pass',
          acting.includes(host),
          `${host}: ${recheck.gate} ${recheck.reason}`,
        );
      }
    });
  }
});

describe('G10 kdump wait: the monitor starts and clears clocks the gate names', () => {
  const config = configWith({ CHECK_KDUMP: 'true', KDUMP_TIMEOUT: '30' });
  const settings = { checkKdump: true, kdumpTimeoutSeconds: 30 };
  const failed = down('c-0');
  const clock = (lastPacketAt: Date | null, waitStartedAt: Date | null) =>
    new Map([['c-0', { lastPacketAt, waitStartedAt }]]);

  it('no clock: the host waits and a clock starts', () => {
    const result = judgeKdumpWaits([failed], new Map(), settings, now);
    assert.deepEqual(result.waiting, ['c-0']);
    assert.deepEqual(result.clockChanges, [{ host: 'c-0', change: 'start', stale: null }]);
  });

  it("an earlier failure's clock (started before the host's last report) is replaced, and the host waits a full KDUMP_TIMEOUT", () => {
    const earlier = secondsAgo(600);
    const result = judgeKdumpWaits([failed], clock(null, earlier), settings, now);
    assert.deepEqual(result.waiting, ['c-0']);
    assert.deepEqual(result.clockChanges, [{ host: 'c-0', change: 'start', stale: earlier }]);
  });

  it('a running clock waits; a timed-out one is power-fenced and keeps its clock for the fence job', () => {
    assert.deepEqual(judgeKdumpWaits([failed], clock(null, secondsAgo(10)), settings, now).clockChanges, []);
    const timedOut = judgeKdumpWaits([failed], clock(null, secondsAgo(45)), settings, now);
    assert.deepEqual([timedOut.normal.map((each) => each.host), timedOut.clockChanges], [['c-0'], []]);
  });

  it('a packet during the wait makes it kdump-fenced and clears the clock; admitted after new failures', () => {
    const result = judgeKdumpWaits([failed], clock(secondsAgo(2), secondsAgo(10)), settings, now);
    assert.deepEqual(
      result.kdumpFenced.map((each) => each.host),
      ['c-0'],
    );
    assert.deepEqual(result.clockChanges, [{ host: 'c-0', change: 'clear', stale: null }]);
    const decision = admit(
      snapshotOf({
        services: [down('c-0'), down('c-1'), up('c-2'), up('c-3')],
        config,
        kdumpClocks: new Map([
          ['c-0', { lastPacketAt: secondsAgo(2), waitStartedAt: secondsAgo(10) }],
          ['c-1', { lastPacketAt: null, waitStartedAt: secondsAgo(45) }],
        ]),
      }),
    );
    assert.deepEqual(
      decision.admitted.map((each) => [each.service.host, each.kdumpFenced]),
      [
        ['c-1', false],
        ['c-0', true],
      ],
    );
  });

  it('without CHECK_KDUMP every host is power-fenced and no clock is touched', () => {
    const result = judgeKdumpWaits([failed], new Map(), { ...settings, checkKdump: false }, now);
    assert.deepEqual([result.normal.length, result.waiting, result.clockChanges], [1, [], []]);
  });
});

describe('G9 scheduler sanity and G5 evacuability, each a pure table', () => {
  it('G9: none of the listed schedulers up defers; none listed, one up, or a failed read goes on', () => {
    const rows: Array<[Parameters<typeof judgeSchedulers>[0], string, string | null]> = [
      [[{ state: 'down' }, { state: 'down' }], 'defer', null],
      [[], 'pass', null],
      [[{ state: 'down' }, { state: 'up' }], 'pass', null],
      [{ readError: 'connection refused' }, 'pass', 'connection refused'],
    ];
    for (const [schedulers, verdict, readError] of rows) {
      const judgement = judgeSchedulers(schedulers);
      assert.deepEqual(
        [judgement.verdict, judgement.readError],
        [verdict, readError],
        JSON.stringify(schedulers),
      );
    }
    const decision = admit(
      snapshotOf({ services: [down('c-0'), up('c-1'), up('c-2')], schedulers: [{ state: 'down' }] }),
    );
    assert.deepEqual([decision.stoppedBy, decision.admitted], ['scheduler-down', []]);
  });

  it('G5: no servers drops a host, a failed list keeps it; aggregates fail closed when none is evacuable and open when unread', () => {
    const settings = {
      evacuableTag: 'evacuable',
      taggedImages: false,
      taggedFlavors: false,
      taggedAggregates: true,
    };
    const context = {
      tag: 'evacuable',
      taggedImages: false,
      taggedFlavors: false,
      evacuableImageIds: new Set<string>(),
      evacuableFlavors: { ids: new Set<string>(), names: new Set<string>() },
    };
    const hosts = [down('a'), down('b'), down('c')];
    const servers = new Map<string, Server[] | null>([
      ['a', []],
      ['b', null],
      ['c', [server('c')]],
    ]);
    const judged = (aggregates: Aggregate[] | null) =>
      judgeEvacuability(hosts, { servers, context, aggregates }, settings);
    const unread = judged(null);
    assert.deepEqual(
      [unread.kept.map((each) => each.host), unread.dropped.map((each) => [each.service.host, each.reason])],
      [['b', 'c'], [['a', 'no-servers']]],
    );
    const noneEvacuable = judged([aggregate('rack', ['b', 'c'], {})]);
    assert.deepEqual(noneEvacuable.kept, []);
    const rack = judged([aggregate('rack', ['c'], { evacuable: 'true' })]);
    assert.deepEqual(
      rack.dropped.map((each) => [each.service.host, each.reason]),
      [
        ['a', 'no-servers'],
        ['b', 'not-in-evacuable-aggregate'],
      ],
    );
  });
});
