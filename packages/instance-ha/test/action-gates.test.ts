import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Aggregate } from '@lifeguard/openstack';
import {
  ACTION_GATES,
  aggregateLimitGate,
  disabledGate,
  evaluateThreshold,
  type GateConfig,
  type GateSnapshot,
  heartbeatGate,
  hostDownGate,
  type Incident,
  impactedHosts,
  impactedIncidentHosts,
  judgeAggregateLimits,
  judgeHostReports,
  runGates,
  type ServiceView,
  sendsHeartbeats,
  thresholdGate,
  thresholdScope,
} from '../src/index.ts';
import { serviceView } from './support/service-view.ts';

const now = new Date('2026-12-01T10:00:00Z');
const secondsAgo = (seconds: number) => new Date(now.getTime() - seconds * 1000).toISOString();
const config: GateConfig = {
  disabled: false,
  deltaSeconds: 30,
  thresholdPercent: 50,
  thresholdSuspectAgeSeconds: 15,
  taggedAggregates: false,
  evacuableTag: 'evacuable',
  checkHeartbeat: false,
  heartbeatTimeoutSeconds: 30,
  heartbeatDetection: false,
  heartbeatDownAfterSeconds: 3,
  novaReportIntervalSeconds: 10,
};

function service(host: string, fields: { state?: 'up' | 'down'; forcedDown?: boolean; age?: number } = {}) {
  return serviceView(host, now, {
    state: fields.state ?? 'up',
    forced_down: fields.forcedDown ?? false,
    updated_at: secondsAgo(fields.age ?? 2),
  });
}

function incident(host: string, state: Incident['state'], fenced: boolean): Incident {
  return {
    id: `${host}.20261201T095000Z.0001`,
    host,
    serviceId: `id-${host}`,
    state,
    openedAt: secondsAgo(600),
    updatedAt: secondsAgo(60),
    fencingToken: 1,
    kdumpFenced: false,
    resume: false,
    evidence: {
      serviceId: `id-${host}`,
      state: 'down',
      status: 'enabled',
      forcedDown: false,
      updatedAt: null,
      ageSeconds: null,
      disabledReason: null,
      zone: 'nova',
    },
    fence: fenced
      ? {
          proof: 'power-off-confirmed',
          method: 'ipmi',
          at: secondsAgo(60),
          by: null,
          note: null,
          reportingOverride: null,
        }
      : null,
    closedAt: null,
    outcome: null,
    lastPublishedAt: null,
    publishCount: 1,
    lastPublishedFencingToken: null,
  };
}

function snapshot(fields: Partial<GateSnapshot> & { services: ServiceView[] }): GateSnapshot {
  return { now, openIncidents: new Map(), heartbeats: null, aggregates: null, config, ...fields };
}

const aggregate = (name: string, hosts: string[], maxFailures: string): Aggregate =>
  ({
    id: 1,
    name,
    hosts,
    metadata: { evacuable: 'true', 'instanceha:max_failures': maxFailures },
  }) as Aggregate;

describe('judgeHostReports: a host is judged by its own reports, never by a forced_down', () => {
  it('up with a report younger than DELTA is reporting; state down or a report older than DELTA is not', () => {
    assert.equal(judgeHostReports(service('c1', { age: 5 }), 30).reporting, true);
    assert.equal(judgeHostReports(service('c1', { state: 'down', age: 5 }), 30).reporting, false);
    assert.equal(judgeHostReports(service('c1', { age: 31 }), 30).reporting, false);
  });

  it('forced down (Nova then says down) is judged by updated_at against DELTA only', () => {
    const reporting = judgeHostReports(service('c1', { state: 'down', forcedDown: true, age: 3 }), 30);
    assert.equal(reporting.reporting, true);
    assert.equal(reporting.evidence, 'state down, forced_down, updated_at 3 s ago (DELTA 30 s)');
    assert.equal(
      judgeHostReports(service('c1', { state: 'down', forcedDown: true, age: 45 }), 30).reporting,
      false,
    );
  });
});

describe('the action gates, each a pure function of a snapshot', () => {
  it('host-down: a reporting host is recovered, a down one passes, a missing service is refused', () => {
    const up = snapshot({ services: [service('c1')] });
    assert.equal(hostDownGate.judge(up, 'c1').verdict, 'recovered');
    assert.match(hostDownGate.judge(up, 'c1').reason, /c1 reports to Nova: state up, updated_at 2 s ago/);
    assert.equal(
      hostDownGate.judge(snapshot({ services: [service('c1', { age: 40 })] }), 'c1').verdict,
      'pass',
    );
    assert.equal(hostDownGate.judge(up, 'c9').verdict, 'refuse');
    assert.equal(hostDownGate.judge(up, 'c1.example.com').verdict, 'recovered', 'matched by short name');
  });

  it('host-down before the fence: a host monitor report the node monitor admitted holds while nova-compute stays silent since it, and not once it reported after it', () => {
    const report = (secondsAgoReported: number) =>
      new Map([
        [
          'c1',
          {
            host: 'c1',
            source: 'masakari' as const,
            reference: 'n-1',
            reportedAt: secondsAgo(secondsAgoReported),
          },
        ],
      ]);
    const judge = (age: number, reported: number) =>
      hostDownGate.judge(
        snapshot({ services: [service('c1', { age })], monitorReports: report(reported) }),
        'c1',
      );
    const overdue = judge(config.novaReportIntervalSeconds * 2, 1);
    assert.equal(overdue.verdict, 'pass', overdue.reason);
    assert.match(overdue.reason, /masakari reported c1 stopped/);
    assert.equal(judge(1, 2).verdict, 'defer', 'silent since the report, not overdue yet');
    assert.equal(judge(1, 5).verdict, 'recovered', 'nova-compute reported after the report');
  });

  it('host-down before the fence: a forced-down host with a fresh updated_at defers while that write may predate its incident, and came back once it reported after the incident opened', () => {
    const openedSecondsAgo = (seconds: number) =>
      new Map([['c1', { ...incident('c1', 'open', false), openedAt: secondsAgo(seconds) }]]);
    const judge = (services: ServiceView[], incidents: Map<string, Incident>) =>
      hostDownGate.judge(snapshot({ services, openIncidents: incidents }), 'c1');
    const forcedAgo = (age: number) => [service('c1', { state: 'down', forcedDown: true, age })];
    // Rebuilt after Redis lost its memory 2 s ago; the marker write that forced it down was 3 s ago.
    const rebuilt = judge(forcedAgo(3), openedSecondsAgo(2));
    assert.equal(rebuilt.verdict, 'defer');
    assert.equal(
      rebuilt.reason,
      'c1 was forced down before incident c1.20261201T095000Z.0001 opened and its updated_at is not older than DELTA yet (state down, forced_down, updated_at 3 s ago (DELTA 30 s)): the write that forced it down freshens it too; waiting for DELTA of silence',
    );
    assert.equal(judge(forcedAgo(2), openedSecondsAgo(2)).verdict, 'defer', 'written as it opened');
    assert.equal(judge(forcedAgo(31), openedSecondsAgo(2)).verdict, 'pass', 'DELTA of silence since');
    const reported = judge(forcedAgo(1), openedSecondsAgo(2));
    assert.equal(reported.verdict, 'recovered', 'a report after the incident opened');
    assert.match(reported.reason, /c1 reports to Nova: state down, forced_down, updated_at 1 s ago/);
    assert.equal(
      judge([service('c1', { age: 3 })], openedSecondsAgo(2)).verdict,
      'recovered',
      'not forced down: Nova says up',
    );
    assert.equal(judge(forcedAgo(3), new Map()).verdict, 'recovered', 'no open incident to date it by');
  });

  it('host-down once fenced: a BMC proof passes whatever forced_down freshened; an operator confirmation waits for DELTA of silence unless overridden', () => {
    const forced = [service('c1', { state: 'down', forcedDown: true, age: 1 })];
    const fenced = (proof: 'power-off-confirmed' | 'operator-confirmed', override: string | null) => {
      const open = incident('c1', 'fenced', true);
      return new Map([
        ['c1', { ...open, fence: { ...open.fence!, proof, by: 'alice', reportingOverride: override } }],
      ]);
    };
    const judge = (incidents: Map<string, Incident>, services = forced) =>
      hostDownGate.judge(snapshot({ services, openIncidents: incidents }), 'c1');
    assert.equal(judge(fenced('power-off-confirmed', null)).verdict, 'pass');
    const waiting = judge(fenced('operator-confirmed', null));
    assert.equal(waiting.verdict, 'defer');
    assert.match(
      waiting.reason,
      /c1 confirmed fenced by alice but its updated_at is not older than DELTA yet/,
    );
    assert.equal(judge(fenced('operator-confirmed', 'state up, updated_at 1 s ago')).verdict, 'pass');
    const silent = [service('c1', { state: 'down', forcedDown: true, age: 31 })];
    assert.equal(judge(fenced('operator-confirmed', null), silent).verdict, 'pass');
    const lifted = [service('c1', { age: 1 })];
    assert.equal(
      judge(fenced('power-off-confirmed', null), lifted).verdict,
      'recovered',
      'forced_down lifted, reporting',
    );
  });

  it('heartbeat: a heartbeat within HEARTBEAT_TIMEOUT means the host is alive; off or silent passes', () => {
    const services = [service('c1', { state: 'down' })];
    const beats = new Map([['c1', new Date(now.getTime() - 10_000)]]);
    const on = { ...config, checkHeartbeat: true };
    assert.equal(
      heartbeatGate.judge(snapshot({ services, heartbeats: beats, config: on }), 'c1').verdict,
      'recovered',
    );
    assert.equal(heartbeatGate.judge(snapshot({ services, heartbeats: beats }), 'c1').verdict, 'pass');
    const old = new Map([['c1', new Date(now.getTime() - 60_000)]]);
    assert.equal(
      heartbeatGate.judge(snapshot({ services, heartbeats: old, config: on }), 'c1').verdict,
      'pass',
    );
  });

  it('disabled: DISABLED defers', () => {
    const services = [service('c1', { state: 'down' })];
    assert.equal(
      disabledGate.judge(snapshot({ services, config: { ...config, disabled: true } }), 'c1').verdict,
      'defer',
    );
    assert.equal(disabledGate.judge(snapshot({ services }), 'c1').verdict, 'pass');
  });

  it('threshold: counts down, silent and fenced hosts with this one, strictly above THRESHOLD defers', () => {
    const two = [service('c1', { state: 'down' }), service('c2', { age: 20 }), service('c3'), service('c4')];
    // c1 down + c2 silent past THRESHOLD_SUSPECT_AGE = 2 of 4 = 50 %: not above 50.
    assert.equal(thresholdGate.judge(snapshot({ services: two }), 'c1').verdict, 'pass');
    const three = snapshot({
      services: two,
      openIncidents: new Map([['c3', incident('c3', 'evacuating', true)]]),
    });
    const judged = thresholdGate.judge(three, 'c1');
    assert.equal(judged.verdict, 'defer');
    assert.equal(judged.reason, '3 of 4 compute hosts impacted (75.0 %, THRESHOLD 50 %)');
  });

  it('§2: an open failed-fence incident of a host that is back up and reporting is not impacted', () => {
    const services = [service('c1', { state: 'down' }), service('c2'), service('c3'), service('c4')];
    const incidents = new Map([
      ['c2', incident('c2', 'failed', false)],
      ['c3', incident('c3', 'fencing', false)],
    ]);
    const view = snapshot({
      services,
      openIncidents: incidents,
      aggregates: [aggregate('rack', ['c1', 'c2', 'c3', 'c4'], '1')],
      config: { ...config, taggedAggregates: true },
    });
    assert.deepEqual([...impactedHosts(view)], ['c1']);
    assert.equal(aggregateLimitGate.judge(view, 'c1').verdict, 'pass');
    assert.equal(thresholdGate.judge(view, 'c1').verdict, 'pass');
  });

  it('a fenced, evacuated host still forced down counts although the marker write just moved its updated_at; once forced_down is lifted and it reports, it does not', () => {
    // The cascade the fault suite found: c2 was fenced and evacuated, lifeguard wrote the `complete`
    // marker (Nova moved updated_at: 1 s ago), and c1 fails now. With max_failures 1, c1 must wait.
    const incidents = new Map([['c2', incident('c2', 'evacuated', true)]]);
    const tagged = { ...config, taggedAggregates: true, thresholdPercent: 90 };
    const justMarked = snapshot({
      services: [
        service('c1', { state: 'down', age: 40 }),
        service('c2', { state: 'down', forcedDown: true, age: 1 }),
        service('c3'),
        service('c4'),
      ],
      openIncidents: incidents,
      aggregates: [aggregate('rack', ['c1', 'c2', 'c3', 'c4'], '1')],
      config: tagged,
    });
    assert.deepEqual([...impactedHosts(justMarked)].sort(), ['c1', 'c2']);
    assert.deepEqual([...impactedIncidentHosts(justMarked)], ['c2']);
    const judged = aggregateLimitGate.judge(justMarked, 'c1');
    assert.equal(judged.verdict, 'defer');
    assert.equal(judged.reason, 'aggregate rack: 2 impacted > instanceha:max_failures 1');

    const backUp = snapshot({
      ...justMarked,
      services: [service('c1', { state: 'down', age: 40 }), service('c2'), service('c3'), service('c4')],
    });
    assert.deepEqual([...impactedHosts(backUp)], ['c1'], 'back up, forced_down lifted: not impacted');
    assert.equal(aggregateLimitGate.judge(backUp, 'c1').verdict, 'pass');
  });

  it('aggregate: impacted hosts of the aggregate and this one above instanceha:max_failures defer', () => {
    const services = [
      service('c1', { state: 'down' }),
      service('c2', { state: 'down' }),
      service('c3'),
      service('c4'),
    ];
    const tagged = { ...config, taggedAggregates: true, thresholdPercent: 90 };
    const view = snapshot({
      services,
      aggregates: [aggregate('rack', ['c1', 'c2', 'c3'], '1')],
      config: tagged,
    });
    const judged = aggregateLimitGate.judge(view, 'c1');
    assert.equal(judged.verdict, 'defer');
    assert.equal(judged.reason, 'aggregate rack: 2 impacted > instanceha:max_failures 1');
    assert.equal(aggregateLimitGate.judge(view, 'c4').verdict, 'pass', 'c4 is in no limited aggregate');
  });

  it('runGates stops at the first gate that does not pass, in order', () => {
    const view = snapshot({ services: [service('c1')], config: { ...config, disabled: true } });
    const run = runGates(ACTION_GATES, view, 'c1');
    assert.equal(run.verdict, 'recovered');
    assert.equal(run.gate, 'host-down');
    assert.equal(run.judgements.length, 1);
    const down = snapshot({
      services: [service('c1', { state: 'down' }), service('c2')],
      config: { ...config, disabled: true },
    });
    assert.equal(runGates(ACTION_GATES, down, 'c1').gate, 'disabled');
    const through = runGates(
      ACTION_GATES,
      snapshot({ services: [service('c1', { state: 'down' }), service('c2'), service('c3')] }),
      'c1',
    );
    assert.deepEqual([through.verdict, through.judgements.length], ['pass', ACTION_GATES.length]);
  });
});

describe('THRESHOLD is one gate for the admission and every action (docs/architecture.md)', () => {
  const four = [service('c1', { state: 'down' }), service('c2', { age: 40 }), service('c3'), service('c4')];

  it('the action gates hold the same gate object the admission judges a cycle with', () => {
    assert.ok(ACTION_GATES.includes(thresholdGate));
    assert.equal(typeof thresholdGate.judgeCycle, 'function');
  });

  it('the same count gives the same verdict and reason, judged for a cycle or for an action', () => {
    // c1 down, c2 stale (older than DELTA): the cycle has c2 as a survivor, the action sees it silent.
    const view = snapshot({ services: four });
    const cycle = thresholdGate.judgeCycle(view, { survivors: ['c2'], suspects: [] });
    const action = thresholdGate.judgeHost(view, 'c2');
    assert.deepEqual(cycle.judgement, action.judgement);
    assert.deepEqual(cycle.judgement, {
      gate: 'threshold',
      verdict: 'pass',
      reason: '2 of 4 compute hosts impacted (50.0 %, THRESHOLD 50 %)',
    });
    assert.deepEqual(thresholdGate.judge(view, 'c2'), action.judgement);
    assert.deepEqual([...cycle.result.impactedHosts].sort(), [...action.result.impactedHosts].sort());

    const over = snapshot({ services: four, config: { ...config, thresholdPercent: 40 } });
    const blocked = thresholdGate.judgeCycle(over, { survivors: ['c2'], suspects: [] });
    assert.deepEqual(blocked.judgement, thresholdGate.judge(over, 'c2'));
    assert.equal(blocked.judgement.verdict, 'defer');
    assert.equal(blocked.result.blocked, true);
  });

  it("a cycle is counted with InstanceHA's formula: down or forced down, the survivors and the suspects", () => {
    const services = [...four, service('c5', { age: 20 }), service('c6', { forcedDown: true })];
    const view = snapshot({ services });
    const cycle = thresholdGate.judgeCycle(view, { survivors: ['c2'], suspects: ['c5'] });
    assert.deepEqual(
      cycle.result,
      evaluateThreshold({
        services,
        survivors: ['c2'],
        suspects: ['c5'],
        thresholdPercent: 50,
        evacuableAggregateHosts: null,
      }),
    );
    assert.equal(cycle.judgement.reason, '4 of 6 compute hosts impacted (66.7 %, THRESHOLD 50 %)');
    assert.equal(cycle.judgement.verdict, 'defer');
  });

  it('with TAGGED_AGGREGATES both count the hosts of evacuable aggregates only, every host when none has one', () => {
    const tagged = { ...config, taggedAggregates: true };
    const rack = snapshot({
      services: four,
      aggregates: [aggregate('rack', ['c1', 'c2'], '9')],
      config: tagged,
    });
    assert.deepEqual([...(thresholdScope(rack) ?? [])], ['c1', 'c2']);
    const cycle = thresholdGate.judgeCycle(rack, { survivors: ['c2'], suspects: [] });
    assert.equal(cycle.judgement.reason, '2 of 2 compute hosts impacted (100.0 %, THRESHOLD 50 %)');
    assert.deepEqual(thresholdGate.judge(rack, 'c2'), cycle.judgement);
    const empty = snapshot({ services: four, aggregates: [aggregate('rack', [], '9')], config: tagged });
    assert.equal(thresholdScope(empty), null);
    assert.equal(
      thresholdScope(snapshot({ services: four, config: tagged })),
      null,
      'the aggregate list failed',
    );
    assert.equal(
      thresholdGate.judgeCycle(empty, { survivors: ['c2'], suspects: [] }).judgement.reason,
      '2 of 4 compute hosts impacted (50.0 %, THRESHOLD 50 %)',
    );
  });
});

describe('admission and the re-checks agree on the same snapshot: one aggregate count, one heartbeat rule', () => {
  const tagged = { ...config, taggedAggregates: true, thresholdPercent: 100 };
  const rack = (maxFailures: string) => aggregate('rack', ['c1', 'c2', 'c3', 'c4', 'c5', 'c6'], maxFailures);
  /** c1…c6, the named ones replaced; the rest up and reporting. */
  const hosts = (changed: Record<string, ServiceView>) =>
    ['c1', 'c2', 'c3', 'c4', 'c5', 'c6'].map((name) => changed[name] ?? service(name));
  const down = (...names: string[]) =>
    Object.fromEntries(names.map((name) => [name, service(name, { state: 'down' })]));
  // Each row: the world, and the hosts admission would act on this cycle (its surviving failed hosts).
  const rows: Array<[string, Partial<GateSnapshot> & { services: ServiceView[] }, string[]]> = [
    [
      'three down, max_failures 3: all pass',
      { services: hosts(down('c1', 'c2', 'c3')), aggregates: [rack('3')] },
      ['c1', 'c2', 'c3'],
    ],
    [
      'three down, max_failures 2: all deferred',
      { services: hosts(down('c1', 'c2', 'c3')), aggregates: [rack('2')] },
      ['c1', 'c2', 'c3'],
    ],
    [
      'a failed host admission dropped (nothing to evacuate) still counts for both',
      { services: hosts(down('c1', 'c2', 'c3')), aggregates: [rack('2')] },
      ['c1', 'c2'],
    ],
    [
      'a silent host past THRESHOLD_SUSPECT_AGE and a fenced one count for both',
      {
        services: hosts({
          ...down('c1'),
          c2: service('c2', { age: 20 }),
          c3: service('c3', { state: 'down', forcedDown: true, age: 100 }),
        }),
        aggregates: [rack('2')],
        openIncidents: new Map([['c3', incident('c3', 'evacuating', true)]]),
      },
      ['c1'],
    ],
    [
      'an open failed-fence incident of a host back up does not count for either',
      {
        services: hosts(down('c1', 'c2')),
        aggregates: [rack('2')],
        openIncidents: new Map([['c3', incident('c3', 'failed', false)]]),
      },
      ['c1', 'c2'],
    ],
  ];
  for (const [name, world, acting] of rows) {
    it(name, () => {
      const view = snapshot({ ...world, config: tagged });
      const admission = judgeAggregateLimits(view, acting);
      for (const host of acting) {
        const recheck = aggregateLimitGate.judge(view, host).verdict;
        assert.equal(
          recheck === 'defer',
          admission.blocked.has(host),
          `${host}: admission ${admission.blocked.has(host) ? 'blocks' : 'admits'}, re-check says ${recheck}`,
        );
      }
    });
  }

  it('the heartbeat rule: alive within HEARTBEAT_TIMEOUT (inclusive), for the admission and the re-check alike', () => {
    const heartbeatConfig = { ...config, checkHeartbeat: true, heartbeatTimeoutSeconds: 30 };
    for (const age of [0, 29, 30, 31, 300]) {
      const last = new Date(now.getTime() - age * 1000);
      const view = snapshot({
        services: [service('c1', { state: 'down' })],
        heartbeats: new Map([['c1', last]]),
        config: heartbeatConfig,
      });
      assert.equal(
        heartbeatGate.judge(view, 'c1').verdict === 'recovered',
        sendsHeartbeats(last, now, 30),
        `age ${age} s`,
      );
      assert.equal(sendsHeartbeats(last, now, 30), age <= 30, `age ${age} s`);
    }
    assert.equal(sendsHeartbeats(undefined, now, 30), false, 'no heartbeat recorded');
  });
});
