import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { parseNovaTimestamp, ReenableWaits } from '@lifeguard/instance-ha';
import { hostDownEvidence, waitFor } from '@lifeguard/testing';
import { bedsClosedAfterTests, type EvacuationBed } from './support/evacuation-bed.ts';
import { addReenableJob, reenableResult } from './support/reenable-jobs.ts';

const closers: Array<() => Promise<void>> = [];
// Registered before the beds' hook, so the queues close before the beds do.
after(async () => {
  for (const close of closers) await close().catch(() => undefined);
});
const bed = bedsClosedAfterTests();

/**
 * Evacuates compute1 (one instance) and returns its incident. Its BMC stops answering after the
 * fence, so the power-on fails and its nova-compute stays dead until the test revives the host.
 */
async function evacuateCompute1(test: EvacuationBed) {
  test.sim.addServer({ host: 'compute1' });
  const { jobId, incident } = await test.failHost('compute1');
  test.sim.setBmcQuirks('compute1', { unreachable: true });
  const { result } = await test.hostJobOutcome(jobId);
  assert.equal(result?.outcome, 'evacuated');
  return incident;
}

async function addJob(test: EvacuationBed, host: string, incidentId: string | null) {
  const added = await addReenableJob(test, host, incidentId);
  closers.push(() => added.queue.close());
  return added;
}

/** The value of an unlabelled gauge in the bed's worker registry. */
async function gauge(test: EvacuationBed, name: string): Promise<number> {
  const metric = await test.registry!.getSingleMetric(name)!.get();
  return metric.values[0]?.value ?? Number.NaN;
}

describe('re-enable while Nova refuses forced_down=false', () => {
  it('after LIFEGUARD_REENABLE_WAITING_ALERT_SECONDS says so once (event, record, gauge), and clears them once the host is re-enabled', async () => {
    const test = await bed({
      instanceHa: { SMART_EVACUATION: 'true' },
      workerEnvironment: { LIFEGUARD_REENABLE_WAITING_ALERT_SECONDS: '1' },
    });
    const incident = await evacuateCompute1(test);
    const service = await test.service('compute1');
    const started = Date.now();
    const { queue, jobId } = await addJob(test, 'compute1', incident.id);
    const waits = new ReenableWaits(test.redis, test.prefix);
    await waitFor('the waiting record', async () => (await waits.list()).length === 1, 10_000);
    assert.equal(
      await gauge(test, 'lifeguard_hosts_waiting_for_nova_compute_restart'),
      0,
      'not counted before the alert time',
    );
    await waitFor('host.reenable.waiting', () => test.events.of('host.reenable.waiting').length > 0, 10_000);
    const [waiting] = test.events.of('host.reenable.waiting');
    assert.equal(waiting!.data.host, 'compute1');
    assert.equal(waiting!.data.serviceId, service.id);
    assert.equal(waiting!.data.incidentId, incident.id);
    assert.ok(waiting!.data.waitingSeconds >= 1, `waited ${waiting!.data.waitingSeconds} s`);
    assert.match(waiting!.data.reason, /`done` evacuation migration records remain/);
    assert.ok(Date.parse(waiting!.data.since) >= started - 1000);
    const [record] = await waits.list();
    assert.equal(record!.host, 'compute1');
    assert.equal(record!.incidentId, incident.id);
    assert.equal(record!.since, waiting!.data.since);
    assert.notEqual(record!.announcedAt, null);
    assert.equal(await gauge(test, 'lifeguard_hosts_waiting_for_nova_compute_restart'), 1);
    const warnings = test.logs
      .records()
      .filter((line) => line.level === 40 && String(line.msg).includes('waiting for its nova-compute'));
    assert.equal(warnings.length, 1);
    const refusals = test.messages('Could not unset force-down for compute1').length;
    await waitFor(
      'two more refused attempts',
      () => test.messages('Could not unset force-down for compute1').length >= refusals + 2,
      10_000,
    );
    assert.equal(test.events.of('host.reenable.waiting').length, 1, 'said once, not every retry');

    test.sim.reviveHost('compute1'); // nova-compute starts again: its evacuations become `completed`
    const result = await reenableResult(queue, jobId);
    assert.equal(result.outcome, 'reenabled');
    assert.deepEqual(await waits.list(), []);
    assert.equal(await gauge(test, 'lifeguard_hosts_waiting_for_nova_compute_restart'), 0);
  });
});

describe('a re-enable retry re-reads the world', () => {
  it('does not act for an incident a newer one of the host superseded (the host failed again)', async () => {
    const test = await bed({ instanceHa: { SMART_EVACUATION: 'true' } });
    const first = await evacuateCompute1(test);
    const { queue, jobId } = await addJob(test, 'compute1', first.id);
    await waitFor(
      'Nova to refuse forced_down=false',
      () => test.messages('Could not unset force-down for compute1').length > 0,
      10_000,
    );
    // Meanwhile the first incident was closed and compute1 failed again: a new incident is open.
    await test.incidents.close(first.id, 'rehabilitated');
    const service = await test.service('compute1');
    const { incident: second } = await test.incidents.openIncident({
      host: 'compute1',
      serviceId: service.id,
      fencingToken: 2,
      kdumpFenced: false,
      evidence: hostDownEvidence(service.id),
    });
    test.sim.reviveHost('compute1'); // Nova would now accept forced_down=false
    const result = await reenableResult(queue, jobId);
    assert.equal(result.outcome, 'superseded');
    assert.match(result.reason ?? '', new RegExp(`incident ${second.id.replaceAll('.', '\\.')} is open`));
    const after = await test.service('compute1');
    assert.equal(after.forced_down, true, 'forced_down left as it was');
    assert.equal(after.status, 'disabled');
    assert.equal((await test.incidents.get(second.id))?.state, 'open', 'the new incident left alone');
    assert.equal(test.events.of('host.reenabled').length, 0);
    assert.deepEqual(await new ReenableWaits(test.redis, test.prefix).list(), []);
  });

  it('does not enable a host that stopped reporting (updated_at older than DELTA) while Nova still shows it up', async () => {
    const test = await bed({
      instanceHa: { SMART_EVACUATION: 'true', DELTA: '2' },
      cloud: { model: { serviceDownTimeSeconds: 60 } },
    });
    await evacuateCompute1(test);
    test.sim.reviveHost('compute1');
    const service = await test.service('compute1');
    // An earlier attempt already lifted forced_down; the host then died again.
    await waitFor('forced_down lifted', async () => {
      await test.nova.updateService(service.id, { forced_down: false });
      return (await test.service('compute1')).state === 'up';
    });
    test.sim.killHost('compute1');
    await waitFor(
      'its last report older than DELTA',
      async () => {
        const reported = parseNovaTimestamp((await test.service('compute1')).updated_at);
        return reported !== null && Date.now() - reported.getTime() > 2_000;
      },
      10_000,
    );
    assert.equal(
      (await test.service('compute1')).state,
      'up',
      'Nova still shows it up (service_down_time 60 s)',
    );
    const { queue, jobId } = await addJob(test, 'compute1', null);
    await waitFor(
      'two checks',
      () => test.messages('Not re-enabling compute1 yet: its compute service last reported').length >= 2,
      10_000,
    );
    assert.equal((await test.service('compute1')).status, 'disabled', 'not enabled');
    test.sim.reviveHost('compute1');
    const result = await reenableResult(queue, jobId);
    assert.equal(result.outcome, 'reenabled');
    assert.equal((await test.service('compute1')).status, 'enabled');
  });
});
