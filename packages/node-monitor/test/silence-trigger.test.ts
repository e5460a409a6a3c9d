import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import type { HostAgentEvidence } from '@lifeguard/instance-ha';
import { createLogger } from '@lifeguard/runtime';
import { millisecondsToNextSilence, newlySilentHosts, SilenceTrigger } from '../src/index.ts';

const now = new Date('2026-12-04T10:00:00Z');
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);

/** Per network, host → seconds since its last heartbeat there. */
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

const moment = { now, listeningSince: null, downAfterSeconds: 3, recentSeconds: 120 };

describe('newlySilentHosts: when the leading monitor polls at once (HEARTBEAT_DETECTION)', () => {
  it('names a host silent on every network for HEARTBEAT_DOWN_AFTER, once per silence', () => {
    const reported = new Map<string, number>();
    const world = evidence({ mgmt: { a: 3.1, b: 0.2, c: 3.5 }, storage: { a: 3.2, b: 5, c: 1 } });
    assert.deepEqual(newlySilentHosts(world, reported, moment), ['a'], 'c is heard on storage, b on mgmt');
    assert.deepEqual(newlySilentHosts(world, reported, moment), [], 'the same silence is not reported twice');
    const later = evidence({ mgmt: { a: 3.05 }, storage: { a: 4 } });
    assert.deepEqual(newlySilentHosts(later, reported, moment), ['a'], 'a new silence after a heartbeat is');
  });

  it('counts silence from the listener start, and leaves out agents silent longer than HEARTBEAT_TIMEOUT', () => {
    const world = evidence({ mgmt: { a: 30, b: 500 } });
    assert.deepEqual(newlySilentHosts(world, new Map(), { ...moment, listeningSince: ago(1) }), []);
    assert.deepEqual(newlySilentHosts(world, new Map(), { ...moment, listeningSince: ago(4) }), ['a']);
  });
});

describe('millisecondsToNextSilence: when the next agent silence falls due', () => {
  const cases: Array<{
    name: string;
    networks: Record<string, Record<string, number>>;
    reported?: Record<string, number>;
    listeningFor?: number;
    expected: number | null;
  }> = [
    { name: 'no host heard', networks: {}, expected: null },
    { name: 'the one host, heard 1.2 s ago', networks: { mgmt: { a: 1.2 } }, expected: 1800 },
    {
      name: 'the host heard last on any network decides',
      networks: { mgmt: { a: 2.5 }, storage: { a: 0.4 } },
      expected: 2600,
    },
    { name: 'the soonest of several hosts', networks: { mgmt: { a: 0.1, b: 2.9, c: 1 } }, expected: 100 },
    { name: 'a host already silent and not reported: due now', networks: { mgmt: { a: 3.4 } }, expected: 0 },
    {
      name: 'a silence already reported is not due again',
      networks: { mgmt: { a: 3.4 } },
      reported: { a: 3.4 },
      expected: null,
    },
    {
      name: 'an agent silent past HEARTBEAT_TIMEOUT is not looked at',
      networks: { mgmt: { a: 121 } },
      expected: null,
    },
    {
      name: 'silence counts from the listener start',
      networks: { mgmt: { a: 30 } },
      listeningFor: 1,
      expected: 2000,
    },
  ];
  for (const { name, networks, reported = {}, listeningFor, expected } of cases) {
    it(name, () => {
      const reportedTimes = new Map(
        Object.entries(reported).map(([host, seconds]) => [host, ago(seconds).getTime()]),
      );
      const listeningSince = listeningFor === undefined ? null : ago(listeningFor);
      const due = millisecondsToNextSilence(evidence(networks), reportedTimes, { ...moment, listeningSince });
      assert.equal(due === null ? null : Math.round(due), expected);
    });
  }
});

describe('SilenceTrigger on an injected clock', () => {
  it('polls at the moment an agent is silent for HEARTBEAT_DOWN_AFTER, not at the next 250 ms look', async () => {
    mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'Date'], now: now.getTime() });
    try {
      // The agent's last heartbeat came 0.1 s before the clock's start: its silence is due at 2,900 ms,
      // between the 250 ms looks at 2,750 and 3,000 ms.
      const world = evidence({ mgmt: { a: 0.1 }, storage: { a: 0.1 } });
      const polls: number[] = [];
      const trigger = new SilenceTrigger({
        read: async () => world,
        listeningSince: () => null,
        isLeader: () => true,
        pollSoon: () => polls.push(Date.now() - now.getTime()),
        downAfterSeconds: 3,
        recentSeconds: 120,
        logger: createLogger({ service: 'silence-trigger-test', level: 'silent' }),
        now: () => new Date(),
      });
      trigger.start();
      for (let elapsed = 0; elapsed < 3500 && polls.length === 0; elapsed++) {
        mock.timers.tick(1);
        // the look's read resolves on the microtask queue
        for (let turn = 0; turn < 5; turn++) await Promise.resolve();
      }
      trigger.stop();
      assert.equal(polls.length, 1, 'one poll for the silence');
      assert.ok(polls[0]! >= 2900 && polls[0]! <= 2902, `polled at ${polls[0]} ms, due at 2,900 ms`);
    } finally {
      mock.timers.reset();
    }
  });
});
