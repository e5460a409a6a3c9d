import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Aggregate } from '@lifeguard/openstack';
import { hostDownEvidence } from '@lifeguard/testing';
import {
  allServicesStale,
  applyRateLimit,
  categoriseServices,
  decideKdump,
  deduplicate,
  evaluateAggregateLimits,
  evaluateThreshold,
  type FreshFailure,
  type HeartbeatCliffState,
  type HeartbeatGateInput,
  type HeartbeatGateSettings,
  INITIAL_HEARTBEAT_CLIFF,
  type Incident,
  judgeHeartbeats,
  needsAnnouncement,
  type ServiceView,
  suspectServices,
} from '../src/index.ts';
import { serviceView } from './support/service-view.ts';

const now = new Date('2026-07-28T10:00:00Z');
let serial = 0;
const view = (host: string, fields: Record<string, unknown> = {}): ServiceView =>
  serviceView(host, now, fields);
const cloud = (total: number, down: number, extra: Record<string, unknown> = {}) =>
  Array.from({ length: total }, (_, index) =>
    view(`c-${index}`, index < down ? { state: 'down', ...extra } : {}),
  );
const downHosts = (services: ServiceView[]) =>
  services.filter((service) => service.state === 'down').map((s) => s.host);

describe('G6 THRESHOLD (docs/instance-ha-rules.md#threshold), strict >', () => {
  const threshold = (services: ServiceView[], survivors: string[], thresholdPercent = 50) =>
    evaluateThreshold({ services, survivors, thresholdPercent, evacuableAggregateHosts: null });

  it('4 nodes with 2 failed = 50% → allowed', () => {
    const services = cloud(4, 2);
    const result = threshold(services, downHosts(services));
    assert.deepEqual([result.impacted, result.total, result.percent, result.blocked], [2, 4, 50, false]);
  });

  it('3 nodes with 2 failed = 66.7% → blocked', () => {
    const services = cloud(3, 2);
    const result = threshold(services, downHosts(services));
    assert.equal(result.blocked, true);
    assert.ok(Math.abs(result.percent - 66.67) < 0.01);
  });

  it('40 nodes with 20 down = 50% → allowed', () => {
    const services = cloud(40, 20);
    assert.equal(threshold(services, downHosts(services)).blocked, false);
  });

  it('counts hosts still forced down from earlier incidents (cascade: 10 hosts, 3 forced down + 2 new = 50% > 40%)', () => {
    const services = [
      ...Array.from({ length: 3 }, (_, index) =>
        view(`old-${index}`, { forced_down: true, state: 'down', status: 'disabled' }),
      ),
      view('new-0', { state: 'down' }),
      view('new-1', { state: 'down' }),
      ...Array.from({ length: 5 }, (_, index) => view(`ok-${index}`)),
    ];
    const result = threshold(services, ['new-0', 'new-1'], 40);
    assert.deepEqual([result.impacted, result.total, result.blocked], [5, 10, true]);
  });

  it('counts a down disabled host in the numerator and every disabled host in the denominator (code, not the guide)', () => {
    const services = [
      view('maint', { status: 'disabled', state: 'down' }),
      view('idle', { status: 'disabled' }),
      view('a', { state: 'down' }),
      view('b'),
    ];
    const result = threshold(services, ['a']);
    assert.deepEqual([result.impacted, result.total, result.percent], [2, 4, 50]);
  });

  it('counts a stale host Nova still reports up through the survivors', () => {
    const services = cloud(4, 0);
    const result = threshold(services, ['c-0', 'c-1', 'c-2']);
    assert.deepEqual([result.impacted, result.blocked], [3, true]);
  });

  it('with TAGGED_AGGREGATES restricts numerator and denominator to evacuable-aggregate hosts', () => {
    const services = cloud(10, 3);
    const evacuable = new Set(['c-0', 'c-5', 'c-6', 'c-7']);
    const result = evaluateThreshold({
      services,
      survivors: ['c-0'],
      thresholdPercent: 50,
      evacuableAggregateHosts: evacuable,
    });
    assert.deepEqual([result.impacted, result.total, result.percent], [1, 4, 25]);
  });

  it('THRESHOLD 0 blocks any failure; 100 never blocks', () => {
    const services = cloud(10, 1);
    assert.equal(threshold(services, ['c-0'], 0).blocked, true);
    const all = cloud(3, 3);
    assert.equal(threshold(all, downHosts(all), 100).blocked, false);
  });
});

describe('silent hosts not failed yet count as impacted (THRESHOLD_SUSPECT_AGE)', () => {
  // updated_at of `view` defaults to 1 s before `now`; DELTA here is 10 s, the suspect age 5 s.
  const silentFor = (host: string, seconds: number) =>
    view(host, { updated_at: new Date(now.getTime() - seconds * 1000).toISOString().replace('Z', '') });

  it('a service silent longer than the suspect age but younger than DELTA is a suspect; healthy, failed, down and forced-down ones are not', () => {
    const services = [
      silentFor('healthy', 1),
      silentFor('suspect', 7),
      silentFor('failed', 12),
      view('down', { state: 'down', updated_at: '2026-07-28T09:59:00' }),
      view('forced', { forced_down: true, updated_at: '2026-07-28T09:59:52' }),
    ];
    assert.deepEqual(suspectServices(services, new Set(['failed']), 5), ['suspect']);
  });

  it('THRESHOLD counts the suspects: 3 failed + 3 silent of 10 = 60 % → blocked (InstanceHA saw 30 %)', () => {
    const services = [
      ...['a', 'b', 'c'].map((host) => silentFor(host, 11)),
      ...['d', 'e', 'f'].map((host) => silentFor(host, 9)),
      ...['g', 'h', 'i', 'j'].map((host) => silentFor(host, 1)),
    ];
    const suspects = suspectServices(services, new Set(['a', 'b', 'c']), 5);
    const guarded = evaluateThreshold({
      services,
      survivors: ['a', 'b', 'c'],
      suspects,
      thresholdPercent: 50,
      evacuableAggregateHosts: null,
    });
    assert.deepEqual([guarded.impacted, guarded.total, guarded.blocked], [6, 10, true]);
    const instanceHa = evaluateThreshold({
      services,
      survivors: ['a', 'b', 'c'],
      thresholdPercent: 50,
      evacuableAggregateHosts: null,
    });
    assert.deepEqual([instanceHa.impacted, instanceHa.blocked], [3, false]);
  });

  it('a single failure among healthy hosts is not delayed: no suspects, allowed', () => {
    const services = [silentFor('dead', 11), ...['b', 'c', 'd'].map((host) => silentFor(host, 1))];
    const suspects = suspectServices(services, new Set(['dead']), 5);
    assert.deepEqual(suspects, []);
    const result = evaluateThreshold({
      services,
      survivors: ['dead'],
      suspects,
      thresholdPercent: 50,
      evacuableAggregateHosts: null,
    });
    assert.equal(result.blocked, false);
  });

  it("instanceha:max_failures counts the aggregate's suspects too, and blocks only its failed hosts", () => {
    const rack = Aggregate.parse({
      id: serial++,
      name: 'rack1',
      hosts: ['a', 'b', 'c'],
      metadata: { evacuable: 'true', 'instanceha:max_failures': '1' },
    });
    const result = evaluateAggregateLimits({
      failedHosts: ['a'],
      suspectHosts: ['b', 'elsewhere'],
      inFlightShortHosts: new Set(),
      aggregates: [rack],
      tag: 'evacuable',
    });
    assert.deepEqual([...result.blocked], ['a']);
    assert.equal(result.trips[0]?.impacted, 2);
    assert.deepEqual(result.trips[0]?.impactedHosts, ['a', 'b'], 'the hosts counted, as many as impacted');
  });
});

describe('G7 per-aggregate instanceha:max_failures (docs/instance-ha-rules.md#g7-aggregate-max_failures)', () => {
  const aggregate = (name: string, hosts: string[], metadata: Record<string, string>) =>
    Aggregate.parse({ id: serial++, name, hosts, metadata });
  const limits = (
    failedHosts: string[],
    aggregates: ReturnType<typeof aggregate>[],
    inFlight: string[] = [],
  ) =>
    evaluateAggregateLimits({
      failedHosts,
      inFlightShortHosts: new Set(inFlight),
      aggregates,
      tag: 'evacuable',
    });

  it('without instanceha:max_failures there is no limit', () => {
    const result = limits(['a', 'b', 'c'], [aggregate('rack1', ['a', 'b', 'c'], { evacuable: 'true' })]);
    assert.equal(result.blocked.size, 0);
  });

  it('under the limit passes; over the limit blocks that aggregate only', () => {
    const rack1 = aggregate('rack1', ['a', 'b', 'c'], { evacuable: 'true', 'instanceha:max_failures': '1' });
    const rack2 = aggregate('rack2', ['d', 'e'], { evacuable: 'true', 'instanceha:max_failures': '1' });
    const result = limits(['a', 'b', 'd'], [rack1, rack2]);
    assert.deepEqual([...result.blocked].sort(), ['a', 'b']);
    assert.deepEqual(
      result.trips.map((trip) => [trip.aggregate, trip.impacted, trip.maxFailures]),
      [['rack1', 2, 1]],
    );
  });

  it('the most restrictive of several aggregates applies', () => {
    const loose = aggregate('loose', ['a', 'b'], { evacuable: 'true', 'instanceha:max_failures': '5' });
    const strict = aggregate('strict', ['a'], { evacuable: 'true', 'instanceha:max_failures': '0' });
    assert.deepEqual([...limits(['a', 'b'], [loose, strict]).blocked], ['a']);
  });

  it('ignores invalid or negative values with a warning', () => {
    const bad = aggregate('bad', ['a'], { evacuable: 'true', 'instanceha:max_failures': 'two' });
    const negative = aggregate('negative', ['a'], { evacuable: 'true', 'instanceha:max_failures': '-1' });
    const result = limits(['a'], [bad, negative]);
    assert.equal(result.blocked.size, 0);
    assert.deepEqual(
      result.warnings.map((warning) => warning.aggregate),
      ['bad', 'negative'],
    );
  });

  it('0 blocks any failure', () => {
    const zero = aggregate('zero', ['a', 'b'], { evacuable: 'true', 'instanceha:max_failures': '0' });
    assert.deepEqual([...limits(['a'], [zero]).blocked], ['a']);
  });

  it('ignores untagged aggregates', () => {
    const untagged = aggregate('untagged', ['a'], { 'instanceha:max_failures': '0' });
    assert.equal(limits(['a'], [untagged]).blocked.size, 0);
  });

  it('counts in-flight hosts but never double-counts one that failed again this cycle (regression)', () => {
    const rack = aggregate('rack', ['a.example.com', 'b', 'c'], {
      evacuable: 'true',
      'instanceha:max_failures': '2',
    });
    assert.equal(limits(['b'], [rack], ['a']).blocked.size, 0, '1 new + 1 in flight = 2, not over 2');
    assert.deepEqual(
      [...limits(['b', 'c'], [rack], ['a']).blocked].sort(),
      ['b', 'c'],
      '2 new + 1 in flight = 3 > 2',
    );
    assert.equal(limits(['a.example.com', 'b'], [rack], ['a']).blocked.size, 0, 'a is counted once');
  });
});

describe('G8 MAX_HOSTS_PER_CYCLE and G4 all-services-stale (docs/instance-ha-rules.md#g8-rate-limit, #g4-all-services-stale)', () => {
  it('admits the first MAX_HOSTS_PER_CYCLE in Nova order and defers the rest', () => {
    assert.deepEqual(applyRateLimit(['a', 'b', 'c'], 2), { admitted: ['a', 'b'], deferred: ['c'] });
    assert.deepEqual(applyRateLimit(['a'], 10), { admitted: ['a'], deferred: [] });
  });

  const failing = (services: ServiceView[]) =>
    services.filter((service) => service.state === 'down').map((service) => service.host);

  it('trips when every active service looks failed (≥ 3 active)', () => {
    assert.equal(allServicesStale(cloud(3, 3), failing(cloud(3, 3))).tripped, true);
  });

  it('does not trip on a partial failure', () => {
    assert.equal(allServicesStale(cloud(5, 4), failing(cloud(5, 4))).tripped, false);
  });

  it('counts the active services and names the failed ones in Nova order, none when nothing looks failed', () => {
    const services = [...cloud(5, 2), view('x', { status: 'disabled' })];
    assert.deepEqual(allServicesStale(services, []), {
      tripped: false,
      active: 5,
      failed: 0,
      failedHosts: [],
    });
    const failed = failing(services);
    assert.deepEqual(allServicesStale(services, [...failed].reverse()).failedHosts, failed);
  });

  it('does not trip with only 2 active services (two-node clouds are exempt)', () => {
    assert.equal(allServicesStale(cloud(2, 2), failing(cloud(2, 2))).tripped, false);
  });

  it('excludes disabled and forced-down services from the active count', () => {
    const services = [
      ...cloud(3, 3),
      view('x', { status: 'disabled' }),
      view('y', { forced_down: true, state: 'down' }),
    ];
    const result = allServicesStale(services, failing(cloud(3, 3)));
    assert.deepEqual([result.active, result.tripped], [3, true]);
  });

  it('counts only active services among the failed: a silent disabled host never makes "12 of 11" (regression)', () => {
    // 11 enabled hosts silent, and a disabled (reserved) host silent with them.
    const services = [...cloud(11, 11), view('reserved-1', { status: 'disabled', state: 'down' })];
    const result = allServicesStale(services, [...failing(cloud(11, 11)), 'reserved-1']);
    assert.deepEqual(
      [result.tripped, result.failed, result.active, result.failedHosts.includes('reserved-1')],
      [true, 11, 11, false],
    );
  });
});

describe('G0 de-duplication against open incidents', () => {
  const incident = (host: string, fields: Partial<Incident> = {}): Incident => ({
    id: `${host}.20260728T095000Z.0001`,
    host,
    serviceId: 'x',
    state: 'open',
    openedAt: '2026-07-28T09:50:00.000Z',
    updatedAt: '2026-07-28T09:50:00.000Z',
    fencingToken: 1,
    kdumpFenced: false,
    resume: false,
    evidence: hostDownEvidence('x'),
    fence: null,
    closedAt: null,
    outcome: null,
    lastPublishedAt: '2026-07-28T09:50:01.000Z',
    publishCount: 1,
    lastPublishedFencingToken: null,
    ...fields,
  });
  const failure = (host: string): FreshFailure => ({
    service: view(host, { state: 'down' }),
    reason: 'state-down',
  });
  const run = (failures: FreshFailure[], resume: ServiceView[], incidents: Incident[]) =>
    deduplicate({
      freshFailures: failures,
      resumeCandidates: resume,
      openIncidents: new Map(incidents.map((each) => [each.host.split('.')[0]!, each])),
      now,
      processingExpirySeconds: 330,
    });

  it('drops a failed host that already has an open, published incident (by short hostname)', () => {
    const result = run([failure('a.example.com'), failure('b')], [], [incident('a')]);
    assert.deepEqual(
      result.fresh.map((each) => each.item.service.host),
      ['b'],
    );
    assert.deepEqual(
      result.dropped.map((each) => [each.host, each.reason]),
      [['a.example.com', 'incident-open']],
    );
  });

  it('announces again, with the same incident, a failure only a deposed leader announced (its host.down is dropped as stale), and only while nobody started fencing it', () => {
    const announcedBy = (token: number, state: Incident['state']) =>
      incident('a', { state, fencingToken: 3, lastPublishedFencingToken: token, publishCount: 1 });
    const decide = (token: number, state: Incident['state'], leaderFencingToken: number | null) =>
      deduplicate({
        freshFailures: [failure('a')],
        resumeCandidates: [],
        openIncidents: new Map([['a', announcedBy(token, state)]]),
        now,
        processingExpirySeconds: 330,
        leaderFencingToken,
      });
    assert.equal(
      decide(3, 'open', 4).fresh[0]?.incident?.id,
      'a.20260728T095000Z.0001',
      'token 3 < leader 4',
    );
    assert.deepEqual(decide(4, 'open', 4).fresh, [], 'announced by this leader already');
    assert.deepEqual(decide(3, 'fencing', 4).fresh, [], 'a fence job runs: the announcement arrived');
    assert.deepEqual(decide(3, 'open', null).fresh, [], 'no leader token given: nothing announced again');
    // A record written before the field existed counts as announced with its opening token.
    const legacy = incident('a', { fencingToken: 3, lastPublishedFencingToken: null });
    assert.equal(needsAnnouncement(legacy, 4), true);
    assert.equal(needsAnnouncement(legacy, 3), false);
  });

  it('keeps a host whose incident was opened but never published (a publish failed), with the same incident', () => {
    const result = run([failure('a')], [], [incident('a', { publishCount: 0, lastPublishedAt: null })]);
    assert.equal(result.fresh[0]!.incident?.id, 'a.20260728T095000Z.0001');
  });

  it('drops a host whose incident failed (a person must act)', () => {
    assert.equal(
      run([failure('a')], [], [incident('a', { state: 'failed' })]).dropped[0]!.reason,
      'incident-failed',
    );
  });

  it('resumes a stalled incident only after the processing expiry without progress', () => {
    const marker = view('a', {
      status: 'disabled',
      state: 'down',
      forced_down: true,
      disabled_reason: 'lifeguard evacuation: t',
    });
    const recent = incident('a', {
      state: 'evacuating',
      lastPublishedAt: '2026-07-28T09:58:00.000Z',
      updatedAt: '2026-07-28T09:58:00.000Z',
    });
    assert.equal(
      run([], [marker], [recent]).resume.length,
      0,
      'published 2 minutes ago: within the 330 s expiry',
    );
    const stalled = incident('a', {
      state: 'evacuating',
      lastPublishedAt: '2026-07-28T09:40:00.000Z',
      updatedAt: '2026-07-28T09:40:00.000Z',
    });
    assert.equal(run([], [marker], [stalled]).resume.length, 1);
    const progressing = { ...stalled, updatedAt: '2026-07-28T09:59:00.000Z' };
    assert.equal(run([], [marker], [progressing]).resume.length, 0);
  });

  it("passes a resume candidate with InstanceHA's marker and no lifeguard incident (switch-over)", () => {
    const marker = view('a', {
      status: 'disabled',
      state: 'down',
      forced_down: true,
      disabled_reason: 'instanceha evacuation: t',
    });
    assert.deepEqual(
      run([], [marker], []).resume.map((each) => each.incident),
      [null],
    );
  });
});

describe('G2/G3 heartbeat gate (docs/instance-ha-rules.md#g2-and-g3-heartbeats, docs/instance-ha-rules.md#short-host-names)', () => {
  const settings = { timeoutSeconds: 120, cliffThresholdPercent: 50, cliffMaxCycles: 3 };
  const listening = new Date(now.getTime() - 1_000_000);
  const beats = (hosts: string[], at = now) => new Map(hosts.map((host) => [host, at]));
  const candidates = (hosts: string[]) => hosts.map((host) => ({ item: host, shortHost: host }));
  const ten = Array.from({ length: 10 }, (_, index) => `h${index}`);
  /**
   * The gate as the monitor holds it across cycles: each judgement starts from the cliff state the
   * previous one left. One evaluation at `now` with these heartbeats and candidate hosts, listening
   * since `listening` and nothing in flight unless `fields` say otherwise.
   */
  class CliffMemory {
    state: HeartbeatCliffState = INITIAL_HEARTBEAT_CLIFF;
    constructor(readonly settings: HeartbeatGateSettings) {}
    get cliffCycles(): number {
      return this.state.consecutiveCliffs;
    }
  }
  const evaluate = (
    gate: CliffMemory,
    lastHeartbeats: Map<string, Date>,
    candidateHosts: string[] = [],
    fields: Partial<HeartbeatGateInput<string>> = {},
  ) => {
    const judgement = judgeHeartbeats(
      {
        candidates: candidates(candidateHosts),
        inFlight: new Set(),
        lastHeartbeats,
        listeningSince: listening,
        now,
        ...fields,
      },
      gate.settings,
      gate.state,
    );
    gate.state = judgement.next;
    return judgement;
  };

  it('during the grace period (listener younger than HEARTBEAT_TIMEOUT, or not started) lets silent hosts pass and judges no cliff', () => {
    const gate = new CliffMemory(settings);
    const young = { listeningSince: new Date(now.getTime() - 5_000) };
    const silent = evaluate(gate, new Map(), ['h1', 'h2'], young);
    assert.deepEqual([silent.grace, silent.cliff, silent.passed], [true, false, ['h1', 'h2']]);
    assert.equal(evaluate(gate, new Map(), ['h1'], { listeningSince: null }).grace, true);
  });

  it('during the grace period still keeps a host with a recent heartbeat (recorded by any replica) from fencing', () => {
    const gate = new CliffMemory(settings);
    const young = evaluate(gate, beats(ten), ['h1', 'absent'], {
      listeningSince: new Date(now.getTime() - 5_000),
    });
    assert.deepEqual([young.grace, young.alive, young.passed], [true, ['h1'], ['absent']]);
  });

  it('does not fence a host whose heartbeat is recent (only nova-compute died); fences a silent one', () => {
    const gate = new CliffMemory(settings);
    const last = beats(ten);
    last.set('silent', new Date(now.getTime() - 200_000));
    const result = evaluate(gate, last, ['h1', 'silent', 'absent']);
    assert.deepEqual(result.alive, ['h1']);
    assert.deepEqual(result.passed, ['silent', 'absent']);
  });

  it('detects a cliff at exactly the threshold (50%), holds fencing, keeps the baseline, and expires after MAX_CYCLES', () => {
    const gate = new CliffMemory(settings);
    evaluate(gate, beats(ten));
    const half = beats(ten.slice(0, 5));
    const lost = ten.slice(5);
    const first = evaluate(gate, half, lost);
    assert.deepEqual(
      [first.cliff, first.passed.length, first.previousActive, first.currentActive],
      [true, 0, 10, 5],
    );
    const second = evaluate(gate, half, lost);
    assert.equal(second.cliff, true, 'the baseline was kept, so the cliff re-triggers');
    const third = evaluate(gate, half, lost);
    assert.deepEqual([third.cliff, third.cliffExpired, third.passed.length], [false, true, 5]);
    const after = evaluate(gate, half);
    assert.equal(after.cliff, false, 'the baseline was reset to the new level');
  });

  it('does not detect a cliff below the threshold, nor with fewer than 3 previous hosts', () => {
    const gate = new CliffMemory(settings);
    evaluate(gate, beats(ten));
    assert.equal(evaluate(gate, beats(ten.slice(0, 6)), ['h9']).cliff, false);
    const small = new CliffMemory(settings);
    evaluate(small, beats(['a', 'b']));
    assert.equal(evaluate(small, new Map(), ['a', 'b']).cliff, false);
  });

  it('HEARTBEAT_CLIFF_MAX_CYCLES 1 accepts the loss at once; a partial recovery resets the counter', () => {
    const once = new CliffMemory({ ...settings, cliffMaxCycles: 1 });
    evaluate(once, beats(ten));
    const result = evaluate(once, beats(ten.slice(0, 2)), ['h9']);
    assert.deepEqual([result.cliff, result.cliffExpired], [false, true]);
    const gate = new CliffMemory(settings);
    evaluate(gate, beats(ten));
    evaluate(gate, beats(ten.slice(0, 4)));
    assert.equal(gate.cliffCycles, 1);
    evaluate(gate, beats(ten.slice(0, 9)));
    assert.equal(gate.cliffCycles, 0);
  });

  it('excludes in-flight hosts from the active count and the baseline', () => {
    const gate = new CliffMemory(settings);
    evaluate(gate, beats(ten));
    const inFlight = new Set(ten.slice(0, 5));
    const result = evaluate(gate, beats(ten.slice(0, 9)), ['h5'], { inFlight });
    assert.deepEqual([result.previousActive, result.currentActive, result.cliff], [5, 4, false]);
  });
});

describe('G10 kdump wait (docs/instance-ha-rules.md#kdump)', () => {
  const at = (seconds: number) => new Date(now.getTime() - seconds * 1000);
  it('a recent packet means kdump-fenced at once', () => {
    assert.equal(
      decideKdump({ lastPacketAt: at(5), waitStartedAt: null, now, kdumpTimeoutSeconds: 30 }),
      'kdump-fenced',
    );
  });
  it('no packet: start waiting, keep waiting, then time out to normal fencing', () => {
    assert.equal(
      decideKdump({ lastPacketAt: null, waitStartedAt: null, now, kdumpTimeoutSeconds: 30 }),
      'start-wait',
    );
    assert.equal(
      decideKdump({ lastPacketAt: null, waitStartedAt: at(10), now, kdumpTimeoutSeconds: 30 }),
      'waiting',
    );
    assert.equal(
      decideKdump({ lastPacketAt: null, waitStartedAt: at(30), now, kdumpTimeoutSeconds: 30 }),
      'timed-out',
    );
  });
  it('an old packet (older than KDUMP_TIMEOUT) does not count', () => {
    assert.equal(
      decideKdump({ lastPacketAt: at(100), waitStartedAt: at(40), now, kdumpTimeoutSeconds: 30 }),
      'timed-out',
    );
  });
  it('a packet that arrives while waiting makes the host kdump-fenced', () => {
    assert.equal(
      decideKdump({ lastPacketAt: at(1), waitStartedAt: at(20), now, kdumpTimeoutSeconds: 30 }),
      'kdump-fenced',
    );
  });
});

describe('categorisation feeds the gates', () => {
  it('a stale-but-up host is a fresh failure the threshold counts', () => {
    const records = [
      {
        id: '1',
        binary: 'nova-compute',
        host: 'a',
        status: 'enabled',
        state: 'up',
        forced_down: false,
        updated_at: '2026-07-28T09:58:00',
      },
      {
        id: '2',
        binary: 'nova-compute',
        host: 'b',
        status: 'enabled',
        state: 'up',
        forced_down: false,
        updated_at: '2026-07-28T09:59:59',
      },
    ];
    const categorisation = categoriseServices(records, { now, deltaSeconds: 30, openIncidents: new Map() });
    const survivors = categorisation.freshFailures.map((each) => each.service.host);
    const result = evaluateThreshold({
      services: [...categorisation.services],
      survivors,
      thresholdPercent: 50,
      evacuableAggregateHosts: null,
    });
    assert.deepEqual([survivors, result.percent, result.blocked], [['a'], 50, false]);
  });
});
