import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sleep } from '@lifeguard/testing';
import { STALE_MARGIN_MILLISECONDS } from '../src/index.ts';
import { scenario } from './support/cloud-sim-scenario.ts';

describe('a poll brought forward to the moment a silent compute service crosses DELTA (cloud-sim)', () => {
  it('a cycle that sees a host silent asks for a poll just after its updated_at + DELTA, and that poll publishes host.down', async () => {
    // Nova's service_down_time is long: only DELTA can make the silent host stale.
    // DELTA 6 s, so THRESHOLD_SUSPECT_AGE 3 s; the host last reported 3 to 4 s ago (on a whole second,
    // as Nova's updated_at), so it is silent and crosses DELTA 2 to 3 s from now.
    const cloud = await scenario({ hosts: 4, serviceDownTimeSeconds: 60, config: { POLL: 30, DELTA: 6 } });
    try {
      const lastReport = Math.ceil((Date.now() - 4_000) / 1000) * 1000;
      cloud.sim.killHost('compute2');
      cloud.sim.model.host('compute2').frozenHeartbeat = lastReport;

      const first = await cloud.run();
      assert.deepEqual(cloud.hostDowns(), [], 'not stale yet: silent for less than DELTA');
      assert.equal(first.earlyPoll?.host, 'compute2');
      assert.equal(first.earlyPoll?.at.getTime(), lastReport + 6_000 + STALE_MARGIN_MILLISECONDS);

      await sleep(Math.max(0, first.earlyPoll!.at.getTime() - Date.now()));
      const second = await cloud.run();
      assert.deepEqual(cloud.hostDowns(), ['compute2'], 'stale at the early poll');
      assert.equal(second.earlyPoll, null, 'no silent host is left to wait for');
      const [down] = cloud.published('host.down');
      assert.ok(down!.evidence.ageSeconds! > 6, 'its updated_at is older than DELTA');
    } finally {
      await cloud.close();
    }
  });

  it('a healthy cloud asks for no early poll: it is polled every POLL seconds', async () => {
    const cloud = await scenario({ hosts: 4, config: { POLL: 30, DELTA: 6 } });
    try {
      const report = await cloud.run();
      assert.equal(report.earlyPoll, null);
    } finally {
      await cloud.close();
    }
  });
});
