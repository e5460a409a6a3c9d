import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '@lifeguard/runtime';
import { CapturedLines, waitFor } from '@lifeguard/testing';
import { PollDeadlineError, PollLoop } from '../src/index.ts';
import { scenario } from './support/cloud-sim-scenario.ts';

describe('polls while Nova hangs and as it recovers (docs/node-monitor.md#poll-failures, cloud-sim)', () => {
  it('cuts each poll of a hanging Nova at its deadline, polls again within POLL, and reports a host that died as Nova recovered within DELTA + POLL of its last report', async () => {
    // Nova's service_down_time is long: DELTA alone makes the dead host stale. DELTA 4 s puts
    // THRESHOLD_SUSPECT_AGE at 2 s, well above the healthy hosts' report interval (0.2 s).
    const cloud = await scenario({ hosts: 4, serviceDownTimeSeconds: 60, config: { POLL: 1, DELTA: 4 } });
    const lines = new CapturedLines();
    const waits: number[] = [];
    const deadlineMilliseconds = 2_000;
    const loop = new PollLoop({
      runCycle: (deadline) => cloud.cycle.run(deadline),
      isLeader: () => true,
      pollSeconds: 1,
      pollDeadlineMilliseconds: deadlineMilliseconds,
      standbyCheckMilliseconds: 10,
      logger: createLogger({ service: 'node-monitor-test', level: 'info', destination: lines }),
      metrics: cloud.metrics,
      onSleep: (milliseconds) => waits.push(milliseconds),
    });
    try {
      // A Nova that accepts the service listing and never answers it.
      cloud.sim.setApiDelay(600_000, '/compute/v2.1/os-services');
      loop.start();
      await waitFor('four polls failed against the hanging Nova', () => loop.failures >= 4, 60_000, 20);
      assert.equal(loop.ready, false, 'readiness withdrawn after 3 failed polls');
      const failed = lines.records().filter((line) => String(line.msg).startsWith('Poll failed'));
      assert.ok(failed.length >= 4);
      for (const line of failed) {
        assert.equal((line.err as { type: string }).type, PollDeadlineError.name, 'cut at the deadline');
      }
      assert.ok(
        waits.every((wait) => wait <= 1_000),
        `every wait planned at most POLL, never backed off: ${waits.map(Math.round)}`,
      );

      // The host dies as Nova recovers.
      cloud.sim.killHost('compute2');
      const lastReport = Date.now();
      cloud.sim.setApiDelay(0);
      await waitFor('host.down for compute2', () => cloud.hostDowns().includes('compute2'), 30_000, 20);
      const [down] = cloud.published('host.down');
      const bound = 4 + 1 + deadlineMilliseconds / 1000;
      assert.ok(
        (down!.evidence as { ageSeconds: number }).ageSeconds <= bound,
        `seen ${(down!.evidence as { ageSeconds: number }).ageSeconds} s after its last report (DELTA + POLL + one poll's deadline: ${bound} s); ${Date.now() - lastReport} ms after it died`,
      );
      assert.equal(loop.ready, true, 'ready again once a poll succeeded');
    } finally {
      await loop.stop();
      await cloud.close();
    }
  });
});
