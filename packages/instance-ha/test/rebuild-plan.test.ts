import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  categoriseServices,
  formatDisabledReason,
  type IncidentState,
  type OpenIncidentSummary,
  planRebuild,
} from '../src/index.ts';

const now = new Date('2026-07-28T10:00:00Z');
const markedAt = new Date('2026-07-28T09:55:00Z');
let serial = 0;

function service(host: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  serial++;
  return {
    id: `0000${serial}-uuid`,
    binary: 'nova-compute',
    host,
    zone: 'nova',
    status: 'enabled',
    state: 'up',
    updated_at: '2026-07-28T09:59:55.000000',
    disabled_reason: null,
    forced_down: false,
    ...fields,
  };
}

/** A compute service as the fencing worker leaves it: forced down, down, disabled with a marker. */
function marked(host: string, reason: string): Record<string, unknown> {
  return service(host, {
    status: 'disabled',
    state: 'down',
    forced_down: true,
    updated_at: '2026-07-28T09:50:00.000000',
    disabled_reason: reason,
  });
}

function plan(records: unknown[], incidents: Record<string, IncidentState> = {}) {
  const openIncidents = new Map<string, OpenIncidentSummary>(
    Object.entries(incidents).map(([host, state]) => [host, { id: `${host}.20260728T095000Z.0001`, state }]),
  );
  return planRebuild(categoriseServices(records, { now, deltaSeconds: 30, openIncidents }));
}

describe('planRebuild: what is rebuilt from Nova after Redis lost its memory', () => {
  it("re-opens, under the marker's incident id, the incident of a host with lifeguard's in-progress marker and no incident", () => {
    const incidentId = 'compute1.20260728T095400Z.a1b2';
    const result = plan([
      marked('compute1', formatDisabledReason({ kind: 'evacuating', incidentId, at: markedAt })),
      service('compute2'),
    ]);
    assert.deepEqual(
      result.restore.map((each) => [each.service.host, each.incidentId]),
      [['compute1', incidentId]],
    );
  });

  it('re-opens a kdump-fenced host too (the restored incident is not taken as kdump-fenced on the marker alone)', () => {
    const incidentId = 'compute3.20260728T095400Z.c3d4';
    const result = plan([
      marked('compute3', formatDisabledReason({ kind: 'evacuating', kdump: true, incidentId, at: markedAt })),
    ]);
    assert.equal(result.restore.length, 1);
    assert.equal(result.restore[0]!.service.marker.kdump, true);
    assert.equal(result.restore[0]!.incidentId, incidentId);
  });

  it('gives a marker without an incident id a new id (null)', () => {
    const result = plan([marked('compute4', formatDisabledReason({ kind: 'evacuating', at: markedAt }))]);
    assert.deepEqual(
      result.restore.map((each) => each.incidentId),
      [null],
    );
  });

  it('leaves a host whose incident Redis still holds alone', () => {
    const result = plan(
      [
        marked(
          'compute5',
          formatDisabledReason({ kind: 'evacuating', incidentId: 'compute5.20260728T095000Z.0001' }),
        ),
      ],
      { compute5: 'evacuating' },
    );
    assert.deepEqual(result.restore, []);
  });

  it("restores nothing for InstanceHA's markers (they resume without an incident) nor for an operator's forced_down", () => {
    const result = plan([
      marked('compute6', 'instanceha evacuation: 2026-07-28T09:55:00'),
      service('compute7', { forced_down: true, state: 'down' }),
      marked('compute8', 'maintenance by ops'),
    ]);
    assert.deepEqual(result.restore, []);
  });

  it('names the hosts left to the re-enable rules (complete) and to an operator (FAILED)', () => {
    const result = plan([
      marked(
        'compute9',
        formatDisabledReason({ kind: 'complete', incidentId: 'compute9.20260728T094000Z.0001' }),
      ),
      marked(
        'compute10',
        formatDisabledReason({ kind: 'failed', incidentId: 'compute10.20260728T094000Z.0001' }),
      ),
    ]);
    assert.deepEqual(result.restore, []);
    assert.deepEqual(
      result.awaitingReenable.map((each) => each.host),
      ['compute9'],
    );
    assert.deepEqual(
      result.awaitingOperator.map((each) => each.host),
      ['compute10'],
    );
  });
});
