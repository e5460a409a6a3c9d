import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ackPlan } from '../src/index.ts';

describe('ackPlan (the acks a consumer channel sends for the deliveries whose handlers finished)', () => {
  const cases: Array<
    [what: string, unsettled: number[], due: number[], upTo: number | null, single: number[]]
  > = [
    ['nothing due', [1, 2, 3], [], null, []],
    ['every unsettled delivery due: one multiple ack', [1, 2, 3, 4], [4, 2, 3, 1], 4, []],
    ['the oldest ones due: multiple up to the last of the run', [5, 6, 7, 8], [5, 6, 7], 7, []],
    ['an older delivery still running: each due one alone', [5, 6, 7, 8], [6, 7, 8], null, [6, 7, 8]],
    [
      'a run, a gap, then more: multiple for the run, singles after the gap',
      [1, 2, 3, 4, 5],
      [1, 2, 4, 5],
      2,
      [4, 5],
    ],
    ['a run of one is a single ack', [9, 10], [9], null, [9]],
    ['tags arrive unordered', [12, 10, 11], [11, 10], 11, []],
  ];
  for (const [what, unsettled, due, upTo, single] of cases) {
    it(what, () => {
      assert.deepEqual(ackPlan(unsettled, due), { upTo, single });
    });
  }

  it('acks exactly the due deliveries, for every subset of eight unsettled ones', () => {
    const unsettled = [1, 2, 3, 4, 5, 6, 7, 8];
    for (let subset = 0; subset < 2 ** unsettled.length; subset++) {
      const due = unsettled.filter((_, index) => (subset >> index) & 1);
      const plan = ackPlan(unsettled, due);
      const covered = unsettled.filter((tag) => plan.upTo !== null && tag <= plan.upTo);
      assert.deepEqual(
        [...covered, ...plan.single].sort((a, b) => a - b),
        due,
      );
    }
  });
});
