// A fence held back for want of room, read from an incident's events: a table over the pure rule.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createEvent, type LifeguardEvent } from '@lifeguard/contracts';
import { capacityHoldOf } from '../src/index.ts';

const source = { service: 'fencing-worker', instance: 'fencing-worker-1' };
const incidentId = '5d1c2b0e-6a8f-4a57-9d7b-2f4b1a0c9e11';
const insufficient = (at: string, serverCount: number, reason: string) =>
  createEvent(
    'host.capacity.insufficient',
    {
      host: 'compute3',
      incidentId,
      serverCount,
      reason,
      unavailable: [{ host: 'compute1', why: 'disabled' }],
    },
    source,
    at,
  );

describe('capacityHoldOf', () => {
  const first = insufficient('2026-12-03T10:00:00.000Z', 3, 'of 2 other compute host(s), 2 disabled');
  const second = insufficient(
    '2026-12-03T10:00:30.000Z',
    2,
    'of 2 other compute host(s), 1 disabled, 1 down',
  );
  const cases: Array<[string, string, LifeguardEvent[], ReturnType<typeof capacityHoldOf>]> = [
    ['no event: no hold', 'open', [], null],
    [
      'the last insufficient-capacity event of an open incident is the hold',
      'open',
      [first, second],
      { at: '2026-12-03T10:00:30.000Z', serverCount: 2, reason: second.data.reason },
    ],
    ['once fencing began (room appeared), no hold', 'fencing', [first], null],
    ['a failed incident is not held for room', 'failed', [first], null],
  ];
  for (const [name, state, events, expected] of cases) {
    it(name, () => assert.deepEqual(capacityHoldOf(state, events), expected));
  }
});
