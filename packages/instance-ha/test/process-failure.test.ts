import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  formatDisabledReason,
  type HostAgentEvidence,
  parseDisabledReason,
  processFailureActions,
} from '../src/index.ts';
import { serviceView } from './support/service-view.ts';

const now = new Date('2026-12-05T10:00:00Z');
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);
const DOWN_AFTER = 3;
const STOPPED_MARKER = formatDisabledReason({ kind: 'process-stopped', at: ago(60) });

/** compute-1's agent heard `heardSecondsAgo` on one network, its processes reported `reportedSecondsAgo`. */
function evidence(
  heardSecondsAgo: number | null,
  novaCompute: 'running' | 'stopped' | null,
  reportedSecondsAgo = heardSecondsAgo ?? 0,
): HostAgentEvidence {
  return {
    networks: new Map([
      ['management', new Map(heardSecondsAgo === null ? [] : [['compute-1', ago(heardSecondsAgo)]])],
    ]),
    processes: new Map(
      novaCompute === null
        ? []
        : [
            [
              'compute-1',
              {
                at: ago(reportedSecondsAgo),
                processes: { 'nova-compute': novaCompute, libvirtd: 'running' },
              },
            ],
          ],
    ),
  };
}

describe('processFailureActions (docs/host-agent.md#nova-compute-stopped)', () => {
  const table: Array<{
    name: string;
    fields: Record<string, unknown>;
    evidence: HostAgentEvidence;
    action: 'disable' | 'enable' | null;
  }> = [
    {
      name: 'nova-compute stopped on a host whose agent is heard: disabled',
      fields: { state: 'down' },
      evidence: evidence(0.5, 'stopped'),
      action: 'disable',
    },
    {
      name: 'nova-compute running: nothing',
      fields: {},
      evidence: evidence(0.5, 'running'),
      action: null,
    },
    {
      name: 'the agent silent (heard longer ago than HEARTBEAT_DOWN_AFTER): nothing, the host may be dead',
      fields: { state: 'down' },
      evidence: evidence(4, 'stopped'),
      action: null,
    },
    {
      name: 'the agent heard but its process report old: nothing',
      fields: { state: 'down' },
      evidence: evidence(0.5, 'stopped', 5),
      action: null,
    },
    {
      name: 'no process report: nothing',
      fields: {},
      evidence: evidence(0.5, null),
      action: null,
    },
    {
      name: 'already disabled by an operator: left alone',
      fields: { status: 'disabled', disabled_reason: 'maintenance: new DIMMs' },
      evidence: evidence(0.5, 'stopped'),
      action: null,
    },
    {
      name: 'forced down (an incident owns it): left alone',
      fields: { forced_down: true, state: 'down' },
      evidence: evidence(0.5, 'stopped'),
      action: null,
    },
    {
      name: "nova-compute runs again under lifeguard's marker: enabled",
      fields: { status: 'disabled', disabled_reason: STOPPED_MARKER },
      evidence: evidence(0.5, 'running'),
      action: 'enable',
    },
    {
      name: "still stopped under lifeguard's marker: stays disabled",
      fields: { status: 'disabled', disabled_reason: STOPPED_MARKER, state: 'down' },
      evidence: evidence(0.5, 'stopped'),
      action: null,
    },
    {
      name: 'running again on a host an operator disabled: never enabled',
      fields: { status: 'disabled', disabled_reason: 'maintenance: new DIMMs' },
      evidence: evidence(0.5, 'running'),
      action: null,
    },
    {
      name: 'running again on a host disabled by an evacuation: never enabled',
      fields: {
        status: 'disabled',
        disabled_reason: formatDisabledReason({ kind: 'complete', at: ago(60) }),
      },
      evidence: evidence(0.5, 'running'),
      action: null,
    },
  ];
  for (const row of table) {
    it(row.name, () => {
      const service = serviceView('compute-1', now, row.fields);
      const actions = processFailureActions([service], row.evidence, now, DOWN_AFTER);
      assert.deepEqual(
        actions.map(({ host, serviceId, action }) => ({ host, serviceId, action })),
        row.action === null ? [] : [{ host: 'compute-1', serviceId: service.id, action: row.action }],
      );
    });
  }

  it("dates each action by the agent's report that decided it", () => {
    const [action] = processFailureActions(
      [serviceView('compute-1', now, { state: 'down' })],
      evidence(0.5, 'stopped', 1.5),
      now,
      DOWN_AFTER,
    );
    assert.deepEqual(action?.reportedAt, ago(1.5));
  });
});

describe("lifeguard's process-stopped marker", () => {
  it('is written with its time and the process, and parsed back as lifeguard’s', () => {
    const at = new Date('2026-12-05T09:18:12.345Z');
    const reason = formatDisabledReason({ kind: 'process-stopped', at });
    assert.equal(reason, 'lifeguard process-stopped: 2026-12-05T09:18:12.345Z process=nova-compute');
    assert.deepEqual(parseDisabledReason(reason), {
      kind: 'process-stopped',
      origin: 'lifeguard',
      kdump: false,
      recovered: false,
      timestamp: '2026-12-05T09:18:12.345Z',
      incidentId: null,
    });
  });

  it('has no kdump form', () => {
    assert.throws(() => formatDisabledReason({ kind: 'process-stopped', kdump: true }), RangeError);
  });

  it('is not mistaken for an operator’s reason that merely mentions it', () => {
    assert.equal(parseDisabledReason('waiting on lifeguard process-stopped: fix').kind, 'none');
  });
});
