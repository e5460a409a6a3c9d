// The power-off claim's rule (powerOffClaimVerdict), as a table: what a fence job's run does with the
// claim's answer and the incident it read after taking it. Pure: no BMC, no Redis.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClaimAnswer } from '@lifeguard/runtime';
import { powerOffClaimVerdict } from '../src/index.ts';

const TABLE: ReadonlyArray<{
  readonly case: string;
  readonly claim: ClaimAnswer;
  readonly fenceRecorded: boolean;
  readonly verdict: ReturnType<typeof powerOffClaimVerdict>;
}> = [
  {
    case: 'taken, never held before, no fence record: power off',
    claim: { kind: 'taken', generation: 1, previous: null },
    fenceRecorded: false,
    verdict: { kind: 'power-off' },
  },
  {
    case: 'taken after a holder that ran out, no fence record: power off again (idempotent)',
    claim: { kind: 'taken', generation: 2, previous: { token: 'w:3', name: 'worker-1' } },
    fenceRecorded: false,
    verdict: { kind: 'power-off' },
  },
  {
    case: 'taken after a holder that recorded its fence: the record is the fence',
    claim: { kind: 'taken', generation: 2, previous: null },
    fenceRecorded: true,
    verdict: { kind: 'use-record' },
  },
  {
    case: 'already this run’s, an operator confirmed the fence meanwhile',
    claim: { kind: 'mine', generation: 1 },
    fenceRecorded: true,
    verdict: { kind: 'use-record' },
  },
  {
    case: 'already this run’s, no record: power off',
    claim: { kind: 'mine', generation: 1 },
    fenceRecorded: false,
    verdict: { kind: 'power-off' },
  },
  {
    case: 'held by another run: wait, whatever the record says',
    claim: {
      kind: 'held',
      generation: 1,
      holder: { token: 'w:1', name: 'worker-1' },
      expiresInMilliseconds: 14_200,
    },
    fenceRecorded: false,
    verdict: {
      kind: 'wait',
      reason: 'worker-1 is powering the host off (its power-off claim runs out in 15 s)',
    },
  },
  {
    case: 'held by a run of unknown name',
    claim: { kind: 'held', generation: 3, holder: { token: 'w:1', name: '' }, expiresInMilliseconds: 1 },
    fenceRecorded: true,
    verdict: {
      kind: 'wait',
      reason: 'another worker is powering the host off (its power-off claim runs out in 1 s)',
    },
  },
];

describe('powerOffClaimVerdict: one run powers a host off per incident', () => {
  for (const row of TABLE) {
    it(row.case, () => {
      assert.deepEqual(powerOffClaimVerdict(row.claim, row.fenceRecorded), row.verdict);
    });
  }
});
