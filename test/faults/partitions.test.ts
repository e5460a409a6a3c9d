// Partitions and cascades, on the whole stack as `npm start` runs it against cloud-sim (every worker its
// own process, the demo cloud: 10 hosts in the evacuable aggregate, THRESHOLD 50, fence_redfish
// through each host's simulated BMC). Two faults:
// - more than half of the hosts in scope cut off from the control plane at once: nothing is fenced,
//   threshold.exceeded is published, and when the partition heals every host is as it was;
// - a slow cascade, one more host cut off each time the previous one was handled, until past the
//   budget — the tighter of THRESHOLD (5 of 10) and the demo aggregate's `instanceha:max_failures` (3):
//   hosts are fenced up to it and not one more; once the cascade heals, the fenced hosts are
//   re-enabled and the hosts beyond the budget were never touched.
// Figures are counted from the events exchange, the incident journal in Redis and cloud-sim's record
// of its hosts (power, forced_down, disabled) and of its evacuate calls.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LifeguardEvent } from '@lifeguard/contracts';
import { EventJournal } from '@lifeguard/runtime';
import { waitFor } from '@lifeguard/testing';
import { SimulatedDeployment } from '../e2e/support/simulated-deployment.ts';
import { recordFaultRow } from './support/fault-table.ts';
import { ACTING_TYPES, INCIDENT_CHAIN, lostEvents } from './support/incident-figures.ts';

describe('partitions and cascades on cloud-sim (the whole stack, THRESHOLD 50 over 10 hosts)', {
  timeout: 600_000,
}, () => {
  let deployment: SimulatedDeployment;

  before(async () => {
    deployment = await SimulatedDeployment.start({
      label: 'faults-partition',
      cloud: {
        reportIntervalSeconds: 1,
        serviceDownTimeSeconds: 4,
        bootMilliseconds: 500,
        evacuationAcceptMilliseconds: 0,
        evacuationRebuildMilliseconds: 500,
      },
      instanceHa: { POLL: '1', DELTA: '4', THRESHOLD: '50' },
    });
  });

  after(async () => {
    await deployment?.stop();
  });

  /** Hosts in THRESHOLD's scope: the evacuable aggregate's protected hosts and its spares. */
  const inScope = () => deployment.layout.protectedHosts.length + deployment.layout.reservedHosts.length;

  /** How many times the host's power went from on to off after `since` (cloud-sim's record). */
  function powerOffs(host: string, since: number): number {
    deployment.recorder.sample();
    const history = deployment.recorder.hostHistory(host);
    let count = 0;
    for (let index = 1; index < history.length; index++) {
      const change = history[index]!;
      if (change.at >= since && history[index - 1]!.state.poweredOn && !change.state.poweredOn) count++;
    }
    return count;
  }

  /** Whether the host was ever powered off, forced down or disabled after `since`. */
  function touched(host: string, since: number): boolean {
    deployment.recorder.sample();
    return deployment.recorder
      .hostHistory(host)
      .some(
        (change) =>
          change.at >= since && (!change.state.poweredOn || change.state.forcedDown || change.state.disabled),
      );
  }

  /** Events of `host` after `since` that act on it. */
  function actedOn(host: string, since: number): LifeguardEvent[] {
    return deployment.timeline
      .forHost(host)
      .filter((event) => ACTING_TYPES.has(event.type) && Date.parse(event.occurredAt) >= since);
  }

  it('more than half of the hosts in scope cut off at once: nothing is fenced, threshold.exceeded is published, and after healing every host is as it was', async () => {
    const { sim, timeline, layout } = deployment;
    const cutOff = layout.protectedHosts.slice(0, 6);
    const total = inScope();
    assert.ok((cutOff.length / total) * 100 > 50, 'the partition is over THRESHOLD');
    const servicesBefore = JSON.stringify(
      sim.hostStates().map((state) => [state.host, state.status, state.forcedDown, state.powerState]),
    );
    const evacuateCallsBefore = JSON.stringify(sim.evacuateCalls());
    const startedAt = Date.now();
    sim.partition(cutOff);

    const exceeded = await timeline.waitFor(
      'threshold.exceeded',
      (event) => Date.parse(event.occurredAt) >= startedAt && event.data.scope === 'global',
      60_000,
    );
    assert.deepEqual([exceeded.data.impacted, exceeded.data.total], [cutOff.length, total]);
    // Long enough for every cut-off host to be far past DELTA (4 s) while still cut off.
    await deployment.run.pollCycles(8);
    const healedAt = Date.now();
    sim.heal(cutOff);
    await waitFor(
      'every host up again',
      () => sim.hostStates().every((state) => state.state === 'up'),
      60_000,
    );
    await deployment.run.pollCycles(3);

    const acted = cutOff.flatMap((host) => actedOn(host, startedAt));
    const touchedHosts = cutOff.filter((host) => touched(host, startedAt));
    const powerOffCount = cutOff.reduce((sum, host) => sum + powerOffs(host, startedAt), 0);
    const servicesAfter = JSON.stringify(
      sim.hostStates().map((state) => [state.host, state.status, state.forcedDown, state.powerState]),
    );
    const blockedPolls = timeline
      .ofType('threshold.exceeded')
      .filter(
        (event) => Date.parse(event.occurredAt) >= startedAt && Date.parse(event.occurredAt) <= healedAt,
      ).length;
    recordFaultRow({
      fault: 'Partition: 6 of 10 hosts in scope cut off at once',
      inFlight: `${cutOff.length} hosts silent, THRESHOLD 50 of ${total}`,
      eventsLost: blockedPolls === 0 ? 1 : 0,
      duplicateEffects: powerOffCount + acted.length,
      secondsToResume: null,
      outcome: `threshold.exceeded ×${blockedPolls} (alert LifeguardThresholdExceeded); 0 fenced; healed untouched`,
    });
    assert.deepEqual(acted, [], 'no host.down, fence or evacuation for a cut-off host');
    assert.deepEqual(touchedHosts, [], 'no cut-off host was powered off, forced down or disabled');
    assert.equal(powerOffCount, 0);
    assert.equal(JSON.stringify(sim.evacuateCalls()), evacuateCallsBefore, 'no evacuate call');
    assert.equal(
      servicesAfter,
      servicesBefore,
      'every compute service as it was: status, forced_down, power',
    );
  });

  it("a slow cascade, one more host cut off each time the previous one was handled: fencing stops at the budget (the aggregate's instanceha:max_failures 3, under THRESHOLD's 5 of 10), the hosts beyond it are never touched, and after healing the fenced hosts are re-enabled", async () => {
    const { sim, timeline, layout, recorder } = deployment;
    const total = inScope();
    const thresholdBudget = Math.floor((total * 50) / 100);
    const aggregateBudget = Math.min(
      ...[...sim.model.aggregates.values()]
        .map((aggregate) => aggregate.metadata['instanceha:max_failures'])
        .filter((value): value is string => value !== undefined)
        .map(Number),
    );
    const budget = Math.min(thresholdBudget, aggregateBudget);
    // Two hosts past the budget.
    const cascade = layout.protectedHosts.slice(0, budget + 2);
    assert.equal(cascade.length, budget + 2, 'the demo cloud has enough protected hosts');
    const startedAt = Date.now();
    const fencedHosts: string[] = [];
    const blockedHosts: string[] = [];
    for (const host of cascade) {
      const cutAt = Date.now();
      sim.partition([host]);
      if (fencedHosts.length < budget) {
        const fenced = await timeline.waitFor('host.fenced', (event) => event.data.host === host, 90_000);
        assert.ok(Date.parse(fenced.occurredAt) >= cutAt);
        fencedHosts.push(host);
        continue;
      }
      await timeline.waitFor(
        'threshold.exceeded',
        (event) => Date.parse(event.occurredAt) >= cutAt && event.data.hosts.includes(host),
        60_000,
      );
      blockedHosts.push(host);
    }
    // The blocked hosts stay cut off well past DELTA: nothing must act on them.
    await deployment.run.pollCycles(8);
    const beforeHeal = blockedHosts.flatMap((host) => actedOn(host, startedAt));
    const healedAt = Date.now();
    sim.heal(cascade);

    const reenabled: LifeguardEvent[] = [];
    for (const host of fencedHosts) {
      reenabled.push(await timeline.waitFor('host.reenabled', (event) => event.data.host === host, 180_000));
    }
    const lastReenabledAt = Math.max(...reenabled.map((event) => timeline.receivedAt(event)));
    await waitFor(
      'every host up again',
      () => sim.hostStates().every((state) => state.state === 'up'),
      60_000,
    );
    await deployment.run.pollCycles(3);
    recorder.sample();

    // Counted: events of each fenced host's incident missing from the exchange or from the journal.
    const journal = new EventJournal(deployment.redis, deployment.keyPrefix);
    let eventsLost = 0;
    let duplicateEffects = 0;
    for (const host of fencedHosts) {
      const incidentIds = new Set(
        timeline
          .ofType('host.down')
          .filter((event) => event.data.host === host && Date.parse(event.occurredAt) >= startedAt)
          .map((event) => event.data.incidentId),
      );
      duplicateEffects += Math.max(0, incidentIds.size - 1);
      duplicateEffects += Math.max(0, powerOffs(host, startedAt) - 1);
      for (const incidentId of incidentIds) {
        eventsLost += await lostEvents(timeline, journal, incidentId, INCIDENT_CHAIN);
      }
    }
    const evacuateCalls = sim.evacuateCalls();
    duplicateEffects += Object.values(evacuateCalls).filter((calls) => calls > 1).length;
    const touchedBlocked = blockedHosts.filter((host) => touched(host, startedAt));
    const actedOnBlocked = blockedHosts.flatMap((host) => actedOn(host, startedAt));
    recordFaultRow({
      fault: 'Slow cascade: one more host cut off per fenced host, past the budget',
      inFlight: `${cascade.length} hosts, budget ${budget} (max_failures ${aggregateBudget}, THRESHOLD ${thresholdBudget} of ${total})`,
      eventsLost,
      duplicateEffects,
      secondsToResume: (lastReenabledAt - healedAt) / 1000,
      outcome: `${fencedHosts.length} fenced, ${blockedHosts.length} blocked (threshold.exceeded); healed untouched`,
    });
    assert.equal(fencedHosts.length, budget, 'hosts fenced up to the budget');
    assert.deepEqual(beforeHeal, [], 'no event acted on a host beyond the budget while it was cut off');
    assert.deepEqual(actedOnBlocked, [], 'no event acted on a host beyond the budget after healing');
    assert.deepEqual(
      touchedBlocked,
      [],
      'the hosts beyond the budget were never powered off, forced down or disabled',
    );
    for (const host of blockedHosts) assert.equal(sim.powerState(host), 'On');
    assert.equal(eventsLost, 0, 'every event of every incident published and journaled');
    assert.equal(duplicateEffects, 0, 'no host fenced twice, no server evacuated twice');
    for (const host of fencedHosts) {
      const service = sim.hostStates().find((state) => state.host === host)!;
      assert.deepEqual([service.state, service.status, service.forcedDown], ['up', 'enabled', false]);
    }
  });
});
