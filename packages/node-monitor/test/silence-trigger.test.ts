import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HostAgentEvidence } from '@lifeguard/instance-ha';
import { newlySilentHosts } from '../src/index.ts';

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
