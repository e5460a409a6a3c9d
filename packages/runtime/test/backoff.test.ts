import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { booleanSetting, exponentialBackoff } from '../src/index.ts';

describe('exponentialBackoff', () => {
  it('doubles from the initial delay and stops at the maximum', () => {
    assert.deepEqual(
      [0, 1, 2, 3, 6, 7].map((doublings) => exponentialBackoff(1000, doublings, 60_000)),
      [1000, 2000, 4000, 8000, 60_000, 60_000],
    );
  });

  it('counts negative doublings as none and never overflows on a long run of failures', () => {
    assert.equal(exponentialBackoff(45, -3, 300), 45);
    assert.equal(exponentialBackoff(200, 1e9, 5000), 5000);
    assert.equal(exponentialBackoff(1, 1e9, Number.POSITIVE_INFINITY), 2 ** 30);
  });
});

describe('booleanSetting', () => {
  it('reads true/1/yes/on and false/0/no/off/empty in any case, and refuses any other word', () => {
    for (const word of ['true', 'TRUE', '1', 'yes', 'On'])
      assert.equal(booleanSetting.parse(word), true, word);
    for (const word of ['false', '0', 'No', 'off', '']) assert.equal(booleanSetting.parse(word), false, word);
    for (const word of ['enabled', 'ture', 'y'])
      assert.equal(booleanSetting.safeParse(word).success, false, word);
  });
});
