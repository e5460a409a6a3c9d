// The field case of a cloud cut off from its control plane and coming back in waves (12 hosts, POLL 5 s,
// DELTA 10 s, THRESHOLD 50), on cloud-sim and the poll cycle sharing one injected clock: the block
// (all services stale, then THRESHOLD) clears while the last hosts are still cut off, and the
// mass-event hold-down keeps them from being fenced until they come back; a host that really died in
// the outage is still reported, alone, once it stayed silent for the hold-down.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { scenario } from './support/cloud-sim-scenario.ts';

const POLL_MILLISECONDS = 5_000;
const DELTA_SECONDS = 10;
const HOSTS = Array.from({ length: 12 }, (_, index) => `compute${index + 1}`);

describe('a whole cloud cut off and coming back in waves (cloud-sim, one injected clock)', () => {
  it('fences none of the stragglers; a host that really died is reported alone after the hold-down (2 × DELTA)', async () => {
    let clock = Date.now();
    const cloud = await scenario({
      hosts: HOSTS,
      config: { POLL: 5, DELTA: DELTA_SECONDS, THRESHOLD: 50 },
      serviceDownTimeSeconds: DELTA_SECONDS,
      now: () => new Date(clock),
      cloudFollowsClock: true,
    });
    const poll = async () => {
      clock += POLL_MILLISECONDS;
      return cloud.run();
    };
    try {
      await cloud.run();
      cloud.sim.partition(HOSTS);
      await poll();
      await poll();
      const stale = await poll();
      assert.equal(stale.decision.stoppedBy, 'all-services-stale', 'every host past DELTA: the cycle stops');

      // Waves: two hosts back every poll; the block clears (6 of 12 stale = THRESHOLD) while the last
      // six are still cut off. compute12 never comes back: it really died.
      const blockedBy: Array<string | null> = [];
      for (let wave = 0; wave < 6; wave++) {
        const back = HOSTS.slice(wave * 2, wave * 2 + 2).filter((host) => host !== 'compute12');
        cloud.sim.heal(back);
        const report = await poll();
        blockedBy.push(report.decision.stoppedBy ?? null);
        assert.deepEqual(
          cloud.hostDowns(),
          [],
          `nothing reported down after wave ${wave + 1} (${back.join(', ')})`,
        );
      }
      assert.ok(blockedBy.includes('threshold'), `THRESHOLD held the early waves: ${blockedBy.join(', ')}`);
      assert.ok(
        cloud.published('admission.blocked').some((event) => event.gate === 'mass-event-hold-down'),
        'the hold-down held the stragglers once THRESHOLD let them through',
      );
      const lastReturn = clock;

      // compute12 stays silent: reported once the hold-down has passed since the last host came back.
      let polls = 0;
      while (cloud.hostDowns().length === 0 && polls++ < 12) await poll();
      assert.deepEqual(cloud.hostDowns(), ['compute12']);
      assert.ok(
        clock - lastReturn >= 2 * DELTA_SECONDS * 1000,
        `reported ${(clock - lastReturn) / 1000} s after the last return, not before the hold-down`,
      );
      const powered = HOSTS.filter((host) => cloud.sim.powerState(host) === 'Off');
      assert.deepEqual(powered, [], 'the node monitor powers nothing off');
    } finally {
      await cloud.close();
    }
  });
});
