import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type HostAgentEvidence,
  hostAgentCliff,
  hostAgentFailures,
  judgeHostAgentSilence,
  novaReportOverdueSeconds,
} from '../src/index.ts';
import { novaTime, serviceView } from './support/service-view.ts';

const now = new Date('2026-12-04T10:00:00Z');
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);
/** HEARTBEAT_DOWN_AFTER 3 s, the harness's report_interval 2 s: a report is overdue after 3 s. */
const settings = { downAfterSeconds: 3, novaReportIntervalSeconds: 2 };

/** The evidence of host agents: per network, host → seconds since its last heartbeat there. */
function evidence(networks: Record<string, Record<string, number>>): HostAgentEvidence {
  return {
    networks: new Map(
      Object.entries(networks).map(([name, hosts]) => [
        name,
        new Map(Object.entries(hosts).map(([host, seconds]) => [host, ago(seconds)])),
      ]),
    ),
    processes: new Map(),
  };
}

/** compute-1's service, last reported `reportedSecondsAgo` seconds ago (null: no updated_at). */
const service = (reportedSecondsAgo: number | null, host = 'compute-1') =>
  serviceView(host, now, {
    updated_at: reportedSecondsAgo === null ? null : novaTime(ago(reportedSecondsAgo)),
  });

describe('judgeHostAgentSilence (docs/host-agent.md#detection-on-heartbeats)', () => {
  const table: Array<{
    name: string;
    networks: Record<string, Record<string, number>>;
    reported: number | null;
    listeningFor?: number;
    kind: string;
  }> = [
    {
      name: 'no agent ever heard: Nova alone decides',
      networks: { mgmt: { other: 0 } },
      reported: 9,
      kind: 'no-agent',
    },
    {
      name: 'heard on both networks',
      networks: { mgmt: { 'compute-1': 0.5 }, storage: { 'compute-1': 0.4 } },
      reported: 1,
      kind: 'heard',
    },
    {
      name: 'silent on one network only (a link fault): heard',
      networks: { mgmt: { 'compute-1': 10 }, storage: { 'compute-1': 0.4 } },
      reported: 12,
      kind: 'heard',
    },
    {
      name: 'silent everywhere, Nova reported after the last heartbeat: the agent died, the host runs',
      networks: { mgmt: { 'compute-1': 5 }, storage: { 'compute-1': 5 } },
      reported: 1,
      kind: 'agent-silent-host-reports',
    },
    {
      name: 'silent everywhere for 3.5 s, the last report 2 s ago but before the silence: not overdue yet',
      networks: { mgmt: { 'compute-1': 3.5 }, storage: { 'compute-1': 3.5 } },
      reported: 2.8,
      kind: 'awaiting-nova',
    },
    {
      name: 'a last heartbeat 2 s ago is within HEARTBEAT_DOWN_AFTER, whatever Nova says: heard',
      networks: { mgmt: { 'compute-1': 2 } },
      reported: 9,
      kind: 'heard',
    },
    {
      name: 'silent everywhere for 3.5 s and the report overdue since before it: failed',
      networks: { mgmt: { 'compute-1': 3.5 }, storage: { 'compute-1': 3.6 } },
      reported: 3.9,
      kind: 'silent',
    },
    {
      name: 'a report within the clock tolerance after the last heartbeat is not a report after the silence',
      networks: { mgmt: { 'compute-1': 4.5 } },
      reported: 3.6,
      kind: 'silent',
    },
    {
      name: 'no updated_at from Nova: never failed on heartbeats',
      networks: { mgmt: { 'compute-1': 30 } },
      reported: null,
      kind: 'awaiting-nova',
    },
    {
      name: 'silent for long, but the listener has run 1 s only: not yet',
      networks: { mgmt: { 'compute-1': 60 } },
      reported: 60,
      listeningFor: 1,
      kind: 'awaiting-nova',
    },
  ];
  for (const row of table) {
    it(row.name, () => {
      const silence = judgeHostAgentSilence(
        {
          shortHost: 'compute-1',
          evidence: evidence(row.networks),
          listeningSince: row.listeningFor === undefined ? null : ago(row.listeningFor),
          service: service(row.reported),
          now,
        },
        settings,
      );
      assert.equal(silence.kind, row.kind, silence.reason);
    });
  }

  it('says when an awaiting host can be failed: the later of the silence deadline and the overdue report', () => {
    const silence = judgeHostAgentSilence(
      {
        shortHost: 'compute-1',
        evidence: evidence({ mgmt: { 'compute-1': 3.2 } }),
        listeningSince: null,
        service: service(2.5),
        now,
      },
      settings,
    );
    assert.equal(silence.kind, 'awaiting-nova');
    assert.equal(silence.kind === 'awaiting-nova' && silence.decideAt?.getTime(), ago(2.5).getTime() + 3000);
  });

  it('a report is overdue after one and a half intervals, and at least one interval and a second', () => {
    assert.deepEqual([1, 2, 10, 60].map(novaReportOverdueSeconds), [2, 3, 15, 90]);
  });
});

describe('hostAgentCliff', () => {
  const cliffSettings = { downAfterSeconds: 3, heartbeatTimeoutSeconds: 120, cliffThresholdPercent: 50 };
  const hosts = (seconds: number[]) =>
    evidence({ mgmt: Object.fromEntries(seconds.map((each, index) => [`compute-${index}`, each])) });

  it('trips when half the agents fell quiet together (more than half of HEARTBEAT_DOWN_AFTER)', () => {
    const cliff = hostAgentCliff(hosts([3.1, 2.4, 1.6, 0.5]), new Set(), now, cliffSettings);
    assert.deepEqual([cliff.tripped, cliff.agents, cliff.quiet], [true, 4, 3]);
  });

  it('does not trip for one host dying among healthy ones, nor below three agents', () => {
    assert.equal(hostAgentCliff(hosts([3.1, 0.4, 0.9, 0.2]), new Set(), now, cliffSettings).tripped, false);
    assert.equal(hostAgentCliff(hosts([3.1, 3.2]), new Set(), now, cliffSettings).tripped, false);
  });

  it('leaves out hosts in flight and agents not heard within HEARTBEAT_TIMEOUT', () => {
    const cliff = hostAgentCliff(hosts([3.1, 500, 0.2, 0.3]), new Set(['compute-0']), now, cliffSettings);
    assert.deepEqual([cliff.tripped, cliff.agents, cliff.quiet], [false, 2, 0]);
  });
});

describe('hostAgentFailures', () => {
  it('fails the silent host, names the one whose agent alone is silent, and says when the awaiting one can be decided', () => {
    const services = [
      serviceView('compute-1', now, { updated_at: novaTime(ago(5)) }),
      serviceView('compute-2', now, { updated_at: novaTime(ago(0.5)) }),
      serviceView('compute-3', now, { updated_at: novaTime(ago(2.5)) }),
      serviceView('compute-4', now, { updated_at: novaTime(ago(6)), status: 'disabled' }),
      serviceView('compute-5', now, { updated_at: novaTime(ago(30)) }),
    ];
    const found = hostAgentFailures(
      {
        services,
        alreadyFailed: new Set(['compute-5']),
        evidence: evidence({
          mgmt: { 'compute-1': 4, 'compute-2': 4, 'compute-3': 3.2, 'compute-4': 4, 'compute-5': 40 },
        }),
        listeningSince: null,
        now,
      },
      settings,
    );
    assert.deepEqual(
      found.failures.map((failure) => [failure.service.host, failure.reason]),
      [['compute-1', 'host-agent-silent']],
      'disabled compute-4 and compute-5 (failed by Nova already) are not failed here',
    );
    assert.deepEqual(
      found.agentSilent.map((each) => each.host),
      ['compute-2'],
    );
    assert.deepEqual(found.nextDecision, { at: new Date(ago(2.5).getTime() + 3000), host: 'compute-3' });
    assert.match(found.reasons.get('compute-1')!, /silent on every network \(mgmt\) for 4 s/);
  });
});
