import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backoffDelay, DEFAULT_RETRY_POLICY } from '../src/http/retry-policy.ts';

/**
 * One caller against an API that answers 503 (Retry-After: 1) to every other call it receives, while
 * another caller polls it every 1,000 ms (the node monitor with POLL 1). The calls are counted in time
 * order; the even ones get the 503. The caller's first attempt lands on an even count. Returns the
 * attempt (1-based) that got an answer, or null when all `attempts` met a 503.
 */
function callBesidePoller(attempts: number, delay: () => number): number | null {
  let at = 500;
  let polledUpTo = 0;
  let calls = 1;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    while ((polledUpTo + 1) * 1000 < at) {
      polledUpTo++;
      calls++;
    }
    calls++;
    if (calls % 2 === 1) return attempt;
    at += delay();
  }
  return null;
}

describe('retry policy: Retry-After', () => {
  it('waits at least the Retry-After seconds (at most the maximum), and at most as long again', () => {
    const oneSecond = Array.from({ length: 500 }, () => backoffDelay(DEFAULT_RETRY_POLICY, 1, '1'));
    assert.ok(Math.min(...oneSecond) >= 1000, `never before the second asked: ${Math.min(...oneSecond)}`);
    assert.ok(Math.max(...oneSecond) <= 2000, `at most 2 s: ${Math.max(...oneSecond)}`);
    assert.ok(
      Math.max(...oneSecond) - Math.min(...oneSecond) > 500,
      'the waits are spread, not all the same second',
    );
    const aMinute = Array.from({ length: 500 }, () => backoffDelay(DEFAULT_RETRY_POLICY, 1, '60'));
    assert.ok(
      aMinute.every((delay) => delay >= 5000 && delay <= 10_000),
      'a Retry-After above the 5 s maximum waits the maximum, and at most as long again',
    );
  });

  it('does not stay in step with a caller polling every second when the API answers 503 to every other call', () => {
    // The exact Retry-After, as waited before, lands every attempt on a 503: the poller's one call
    // in between always restores the parity.
    assert.equal(
      callBesidePoller(4, () => 1000),
      null,
    );
    const trials = 2000;
    let answered = 0;
    for (let trial = 0; trial < trials; trial++) {
      if (callBesidePoller(4, () => backoffDelay(DEFAULT_RETRY_POLICY, 1, '1')) !== null) answered++;
    }
    assert.ok(
      answered / trials > 0.6,
      `with the random part, most callers get through within 4 attempts: ${answered}/${trials}`,
    );
  });
});
