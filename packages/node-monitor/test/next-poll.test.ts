import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ServiceView } from '@lifeguard/instance-ha';
import { novaTime, serviceView } from '../../instance-ha/test/support/service-view.ts';
import { earlyPoll, STALE_MARGIN_MILLISECONDS, secondsUntilNextPoll } from '../src/index.ts';

const now = new Date('2026-07-28T10:00:00Z');
const options = { deltaSeconds: 10, suspectAgeSeconds: 5 };
/** A nova-compute service that last reported `ageSeconds` before `now`. */
const service = (host: string, ageSeconds: number, fields: Record<string, unknown> = {}): ServiceView =>
  serviceView(host, now, { updated_at: novaTime(new Date(now.getTime() - ageSeconds * 1000)), ...fields });

describe('earlyPoll: a poll at the moment a silent compute service crosses DELTA', () => {
  it('asks for none while every service reported within THRESHOLD_SUSPECT_AGE', () => {
    assert.equal(earlyPoll([service('c1', 0), service('c2', 2), service('c3', 5)], options), null);
  });

  it('asks for one just after updated_at + DELTA of a silent service', () => {
    const early = earlyPoll([service('c1', 1), service('c2', 7)], options);
    assert.equal(early?.host, 'c2');
    assert.equal(early?.at.getTime(), now.getTime() - 7_000 + 10_000 + STALE_MARGIN_MILLISECONDS);
  });

  it('picks the silent service that crosses DELTA first', () => {
    const early = earlyPoll([service('c1', 6), service('c2', 9.5), service('c3', 8)], options);
    assert.equal(early?.host, 'c2');
    assert.equal(early?.at.getTime(), now.getTime() + 500 + STALE_MARGIN_MILLISECONDS);
  });

  it('ignores services that cannot become fresh failures, or already are', () => {
    const services = [
      service('stale', 11),
      service('said-down', 7, { state: 'down' }),
      service('disabled', 7, { status: 'disabled', disabled_reason: 'maintenance' }),
      service('forced', 7, { forced_down: true }),
      service('unparsable', 7, { updated_at: 'yesterday' }),
      service('never-reported', 7, { updated_at: null }),
    ];
    assert.equal(earlyPoll(services, options), null);
  });

  it('asks for none when THRESHOLD_SUSPECT_AGE is not below DELTA', () => {
    assert.equal(earlyPoll([service('c1', 9)], { deltaSeconds: 10, suspectAgeSeconds: 10 }), null);
  });
});

describe('secondsUntilNextPoll', () => {
  const at = (milliseconds: number) => ({ at: new Date(milliseconds), host: 'c1' });

  it('is POLL without an early poll, or when the early poll falls after POLL', () => {
    assert.equal(secondsUntilNextPoll(15, null, 0), 15);
    assert.equal(secondsUntilNextPoll(15, at(20_000), 0), 15);
  });

  it('is the time left until an earlier early poll, and never negative', () => {
    assert.equal(secondsUntilNextPoll(15, at(2_500), 0), 2.5);
    assert.equal(secondsUntilNextPoll(15, at(1_000), 4_000), 0);
  });
});
