// The kdump wait of one failed host, as the node monitor and the fencing worker share it
// (docs/instance-ha-rules.md#kdump): the monitor's poll cycle waits for fence_kdump packets first and
// admits the host once KDUMP_TIMEOUT has passed; the fencing worker's fence job then waits for packets
// again before power fencing. Both read one wait clock in Redis. The test runs the real poll cycle
// (cloud-sim for Nova, real Redis) with a short KDUMP_TIMEOUT, hands the admitted host to the fencing
// worker's real wait, and measures, from the clock the store holds and the wait's own log lines, how
// long the host waited in all and how many times the fencing worker slept for a packet.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitForKdump } from '@lifeguard/fencing-worker';
import { KdumpStore } from '@lifeguard/instance-ha';
import { createLogger } from '@lifeguard/runtime';
import { CapturedLines } from '@lifeguard/testing';
import { scenario } from '../../packages/node-monitor/test/support/cloud-sim-scenario.ts';

const KDUMP_TIMEOUT_SECONDS = 1;

/** A KdumpStore that counts the fencing worker's packet look-ups (each one after a sleep but the first). */
class CountingKdumpStore extends KdumpStore {
  lookups = 0;
  override lastPacketAt(host: string): Promise<Date | null> {
    this.lookups++;
    return super.lastPacketAt(host);
  }
}

describe('kdump: one wait from the monitor to the fence', { timeout: 120_000 }, () => {
  it('a silent host is power fenced KDUMP_TIMEOUT after the first wait started, not after a second full wait in the fencing worker', async (t) => {
    const cloud = await scenario({
      hosts: 4,
      config: { CHECK_KDUMP: true, KDUMP_TIMEOUT: KDUMP_TIMEOUT_SECONDS },
    });
    try {
      const host = 'compute2';
      await cloud.kill(host);
      const store = new CountingKdumpStore(cloud.redis, cloud.prefix);

      // The monitor's cycles until it admits the host (blocked by kdump-wait meanwhile).
      let firstWaitStartedAt: Date | null = null;
      let waitingCycles = 0;
      while (cloud.hostDowns().length === 0) {
        const report = await cloud.run();
        const waiting = report.decision?.blocked.some(
          (entry) => entry.gate === 'kdump-wait' && entry.hosts.includes(host),
        );
        if (waiting) {
          waitingCycles++;
          firstWaitStartedAt ??= await store.waitStartedAt(host);
        }
        assert.ok(waitingCycles < 50, 'the monitor admits the host once KDUMP_TIMEOUT has passed');
        if (cloud.hostDowns().length === 0) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      assert.ok(waitingCycles > 0, 'the monitor waited for fence_kdump before admitting the host');
      assert.ok(firstWaitStartedAt !== null, 'the monitor started the wait clock');
      const [down] = cloud.published('host.down');
      assert.equal(down?.kdumpFenced, false, 'no packet: not kdump-fenced');

      // The fencing worker's wait for the admitted host, on the same Redis clock.
      const logs = new CapturedLines();
      const logger = createLogger({ service: 'fencing-worker', level: 'debug', destination: logs });
      const outcome = await waitForKdump(store, host, KDUMP_TIMEOUT_SECONDS, logger, 50);
      const decidedAt = Date.now();
      assert.equal(outcome.decision, 'timed-out', 'no packet: power fencing');

      const fenceWait = logs.records().find((line) => line.msg === 'kdump wait decided');
      const fenceWaitStartedAt = new Date(String(fenceWait?.waitStartedAt));
      const waitedSeconds = (decidedAt - firstWaitStartedAt.getTime()) / 1000;
      t.diagnostic(
        `monitor cycles blocked by kdump-wait: ${waitingCycles}; first wait started ${firstWaitStartedAt.toISOString()}; ` +
          `fencing worker's wait clock ${fenceWaitStartedAt.toISOString()}; packet look-ups by the fencing worker: ${store.lookups}; ` +
          `power fencing decided ${waitedSeconds.toFixed(2)} s after the first wait started (KDUMP_TIMEOUT ${KDUMP_TIMEOUT_SECONDS} s)`,
      );
      assert.equal(
        fenceWaitStartedAt.toISOString(),
        firstWaitStartedAt.toISOString(),
        'the fencing worker continues the wait the monitor started, it does not start a second one',
      );
      assert.equal(
        store.lookups,
        1,
        'KDUMP_TIMEOUT had already passed: the fencing worker decides at its first look, without sleeping',
      );
    } finally {
      await cloud.close();
    }
  });
});
