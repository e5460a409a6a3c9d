import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitFor } from '@lifeguard/testing';
import { type Scenario, scenario } from './support/cloud-sim-scenario.ts';

/**
 * The kdump wait clock belongs to one failure (docs/instance-ha-rules.md#kdump): a host that comes
 * back while the monitor waits for its fence_kdump packets, then fails again, waits a full
 * KDUMP_TIMEOUT again, and a packet during that second wait makes it kdump-fenced. The cycle's
 * clock is moved forward past KDUMP_TIMEOUT instead of waiting for it.
 */
describe('the kdump wait clock of a host that came back during its wait', () => {
  const KDUMP_TIMEOUT = 5;
  const kdumpScenario = async (clock: { offsetMilliseconds: number }) =>
    scenario({
      hosts: 4,
      config: { CHECK_KDUMP: true, KDUMP_TIMEOUT, THRESHOLD: 100 },
      now: () => new Date(Date.now() + clock.offsetMilliseconds),
    });
  const kdumpWaitBlocked = (cloud: Scenario) =>
    cloud.published('admission.blocked').filter((event) => event.gate === 'kdump-wait');
  const revive = async (cloud: Scenario, host: string, after: Date) => {
    cloud.sim.reviveHost(host);
    await waitFor(
      `${host} reports more than a second after ${after.toISOString()} (Nova may keep whole seconds)`,
      () => {
        const service = cloud.sim.model.host(host);
        return (
          cloud.sim.model.serviceIsUp(service) &&
          cloud.sim.model.serviceUpdatedAt(service) > after.getTime() + 1000
        );
      },
      10_000,
      20,
    );
  };

  for (const settledByAPoll of [true, false]) {
    it(`waits a full KDUMP_TIMEOUT again when it fails again (${settledByAPoll ? 'a poll saw it report' : 'no poll while it reported'}); a packet in the second wait is honoured`, async () => {
      const clock = { offsetMilliseconds: 0 };
      const cloud = await kdumpScenario(clock);
      try {
        await cloud.kill('compute1');
        await cloud.run();
        const firstClock = await cloud.kdump.waitStartedAt('compute1');
        assert.notEqual(firstClock, null, 'the first wait started');
        assert.equal(kdumpWaitBlocked(cloud).length, 1);

        await revive(cloud, 'compute1', firstClock!);
        if (settledByAPoll) {
          await cloud.run();
          assert.equal(await cloud.kdump.waitStartedAt('compute1'), null, 'settled: it reports again');
          assert.match(cloud.logs.text, /its kdump wait clock is settled/);
        }

        await cloud.kill('compute1');
        clock.offsetMilliseconds = (KDUMP_TIMEOUT + 3) * 1000;
        await cloud.run();
        assert.deepEqual(cloud.hostDowns(), [], 'not power-fenced at the first look of the second failure');
        assert.equal(kdumpWaitBlocked(cloud).length, 2, 'held by a second kdump wait');
        const secondClock = await cloud.kdump.waitStartedAt('compute1');
        assert.ok(secondClock !== null && secondClock > firstClock!, 'a clock of its own');

        await cloud.kdump.recordPacket('compute1', new Date(Date.now() + clock.offsetMilliseconds));
        await cloud.run();
        assert.deepEqual(cloud.hostDowns(), ['compute1']);
        assert.equal(cloud.published('host.down')[0]?.kdumpFenced, true, 'the crash dump is kept');
      } finally {
        await cloud.close();
      }
    });
  }
});
