import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createEvent, type EventData, type LifeguardEvent } from '@lifeguard/contracts';
import { type InstanceOutcomeEvent, incidentVmoves, vmoveVerdict } from '../src/index.ts';

const INCIDENT = 'compute-3.20261207T050000Z.7f3a';
const SOURCE = { service: 'evacuation-worker', instance: 'test:1' };
const A = '1f4c9a3e-55d2-4f0a-9a34-6a1c1c2f7d10';
const B = 'b9837317-a5b8-44f4-93b4-45500c562bb8';
const C = '07a331b8-df15-4582-b121-73ed3541a408';

const instance = (id: string, name: string) => ({
  host: 'compute-3',
  incidentId: INCIDENT,
  instanceId: id,
  instanceName: name,
});
const evacuated = (
  id: string,
  name: string,
  at: string,
  durationSeconds = 4,
  targetHost: string | null = 'compute-1',
) =>
  createEvent(
    'instance.evacuated',
    {
      ...instance(id, name),
      targetHost,
      migrationStatus: 'done',
      attempts: 1,
      novaRequestId: 'req-1',
      durationSeconds,
    },
    SOURCE,
    at,
  );
const failed = (id: string, name: string, at: string, reason = 'still ERROR after 120 s') =>
  createEvent(
    'instance.evacuation.failed',
    { ...instance(id, name), reason, attempts: 2, novaRequestId: null },
    SOURCE,
    at,
  );
const skipped = (
  id: string,
  name: string,
  at: string,
  reason: EventData<'instance.evacuation.skipped'>['reason'],
  attempts = 0,
) =>
  createEvent(
    'instance.evacuation.skipped',
    { ...instance(id, name), reason, attempts, novaRequestId: null },
    SOURCE,
    at,
  );
const started = (at: string) =>
  createEvent(
    'host.evacuation.started',
    { host: 'compute-3', incidentId: INCIDENT, mode: 'smart', instanceCount: 3, reservedHost: null },
    SOURCE,
    at,
  );

describe('vmoveVerdict: an instance’s outcome in lifeguard → its vmove status', () => {
  const cases: Array<[string, InstanceOutcomeEvent, string | null, string | null]> = [
    ['evacuated', evacuated(A, 'a', '2026-12-07T05:00:10.000Z'), 'succeeded', null],
    ['evacuation failed', failed(A, 'a', '2026-12-07T05:00:10.000Z'), 'failed', 'still ERROR after 120 s'],
    [
      'deleted by its owner: not moved',
      skipped(A, 'a', '2026-12-07T05:00:10.000Z', 'deleted', 1),
      'ignored',
      'deleted by its owner: not moved',
    ],
    [
      'deleted before any evacuate',
      skipped(A, 'a', '2026-12-07T05:00:10.000Z', 'deleted'),
      'ignored',
      'deleted by its owner: not moved',
    ],
    ['skipped for its status', skipped(A, 'a', '2026-12-07T05:00:10.000Z', 'status'), null, null],
    ['skipped by name', skipped(A, 'a', '2026-12-07T05:00:10.000Z', 'name'), null, null],
    ['skipped by project', skipped(A, 'a', '2026-12-07T05:00:10.000Z', 'project'), null, null],
    ['skipped by tag', skipped(A, 'a', '2026-12-07T05:00:10.000Z', 'tag'), null, null],
    ['skipped by metadata', skipped(A, 'a', '2026-12-07T05:00:10.000Z', 'metadata'), null, null],
    [
      'its own metadata says evacuable=false',
      skipped(A, 'a', '2026-12-07T05:00:10.000Z', 'evacuable-false'),
      null,
      null,
    ],
    ['not tagged evacuable', skipped(A, 'a', '2026-12-07T05:00:10.000Z', 'not-evacuable'), null, null],
  ];
  for (const [name, event, status, message] of cases) {
    it(`${name} → ${status ?? 'no vmove'}`, () => {
      const verdict = vmoveVerdict(event);
      assert.deepEqual(
        verdict === null ? null : [verdict.status, verdict.message],
        status === null ? null : [status, message],
      );
    });
  }
});

describe('incidentVmoves: an incident’s events → the notification’s vmoves', () => {
  it('gives one vmove per instance whose evacuation ended, from the failed host to where it runs now', () => {
    const events: LifeguardEvent[] = [
      started('2026-12-07T05:00:00.000Z'),
      skipped(C, 'c', '2026-12-07T05:00:00.100Z', 'tag'),
      evacuated(A, 'a', '2026-12-07T05:00:09.500Z', 8.25),
      failed(B, 'b', '2026-12-07T05:02:00.000Z'),
    ];
    assert.deepEqual(incidentVmoves(INCIDENT, events), [
      {
        instanceUuid: A,
        instanceName: 'a',
        sourceHost: 'compute-3',
        destHost: 'compute-1',
        startTime: '2026-12-07T05:00:01.250000',
        endTime: '2026-12-07T05:00:09.500000',
        type: 'evacuation',
        status: 'succeeded',
        message: null,
      },
      {
        instanceUuid: B,
        instanceName: 'b',
        sourceHost: 'compute-3',
        destHost: null,
        startTime: '2026-12-07T05:00:00.000000',
        endTime: '2026-12-07T05:02:00.000000',
        type: 'evacuation',
        status: 'failed',
        message: 'still ERROR after 120 s',
      },
    ]);
  });
  it('keeps each instance’s latest outcome (an incident retried after a failure), in any journal order', () => {
    const events: LifeguardEvent[] = [
      evacuated(A, 'a', '2026-12-07T05:10:00.000Z'),
      failed(A, 'a', '2026-12-07T05:02:00.000Z'),
      started('2026-12-07T05:00:00.000Z'),
    ];
    const moves = incidentVmoves(INCIDENT, events);
    assert.deepEqual(
      moves.map((move) => [move.instanceUuid, move.status, move.endTime]),
      [[A, 'succeeded', '2026-12-07T05:10:00.000000']],
    );
  });
  it('has no start for a deleted instance no evacuate was sent for, and no vmove before any outcome', () => {
    const moves = incidentVmoves(INCIDENT, [
      started('2026-12-07T05:00:00.000Z'),
      skipped(A, 'a', '2026-12-07T05:00:03.000Z', 'deleted'),
      skipped(B, 'b', '2026-12-07T05:00:04.000Z', 'deleted', 1),
    ]);
    assert.deepEqual(
      moves.map((move) => [move.instanceUuid, move.status, move.startTime]),
      [
        [A, 'ignored', null],
        [B, 'ignored', '2026-12-07T05:00:00.000000'],
      ],
    );
    assert.deepEqual(incidentVmoves(INCIDENT, [started('2026-12-07T05:00:00.000Z')]), []);
  });
  it('leaves out the events of another incident', () => {
    const other = createEvent(
      'instance.evacuated',
      {
        ...evacuated(A, 'a', '2026-12-07T05:00:09.000Z').data,
        incidentId: 'compute-4.20261207T050000Z.0001',
      },
      SOURCE,
      '2026-12-07T05:00:09.000Z',
    );
    assert.deepEqual(incidentVmoves(INCIDENT, [other]), []);
  });
  it('keeps the destination unknown when the evacuation worker could not tell it', () => {
    const [move] = incidentVmoves(INCIDENT, [evacuated(A, 'a', '2026-12-07T05:00:09.000Z', 1, null)]);
    assert.equal(move?.destHost, null);
  });
});
