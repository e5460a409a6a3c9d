import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JOB_NAMES } from '@lifeguard/contracts';
import { hostDownEvidence, waitFor } from '@lifeguard/testing';
import { bedsClosedAfterTests, type EvacuationBed } from './support/evacuation-bed.ts';

const bed = bedsClosedAfterTests();

/** compute1's nova-compute dies, Nova sees it down, its incident opens; then it starts again. */
async function downThenBack(test: EvacuationBed) {
  test.sim.killHost('compute1');
  await waitFor('compute1 down', async () => (await test.service('compute1')).state === 'down', 10_000);
  const opened = await test.failHost('compute1', { fence: false, addJob: false });
  const lastReport = (await test.service('compute1')).updated_at;
  test.sim.reviveHost('compute1');
  // Nova says down (lifeguard forced it down), but the host reports again.
  await waitFor(
    'a new report from compute1',
    async () => (await test.service('compute1')).updated_at !== lastReport,
    10_000,
  );
  return opened;
}

describe('safety checks before the first evacuate', () => {
  it('refuses to evacuate a host whose incident has no fence record', async () => {
    const test = await bed({ instanceHa: { SMART_EVACUATION: 'true' } });
    const server = test.sim.addServer({ host: 'compute1' });
    const { jobId, incident } = await test.failHost('compute1', { fence: false });
    const { failedReason } = await test.hostJobOutcome(jobId);
    assert.match(failedReason ?? '', /refused: incident .* has no fence record: the host was not fenced/);
    assert.equal(test.sim.evacuateCalls(server.id), 0);
    assert.equal(test.servers([server.id])[0]!.host, 'compute1');
    const failed = test.events.of('host.evacuation.failed');
    assert.equal(failed.length, 1);
    assert.match(failed[0]!.data.reason, /^refused: .*no fence record/);
    assert.equal(test.messages('ALERT: refusing to evacuate compute1').length, 1);
    assert.match(
      (await test.service('compute1')).disabled_reason ?? '',
      /^lifeguard evacuation: /,
      'Nova is left as it was',
    );
    assert.equal((await test.incidents.get(incident.id))?.state, 'open');
  });

  it('refuses an instance job whose incident has no fence record, even without its host job', async () => {
    const test = await bed({ instanceHa: { SMART_EVACUATION: 'true' } });
    const server = test.sim.addServer({ host: 'compute1' });
    const { incident } = await test.failHost('compute1', { fence: false, addJob: false });
    const { queue, jobId } = await test.addInstanceJob('compute1', server, incident.id);
    await waitFor('the instance job to fail', async () => (await queue.getJobState(jobId)) === 'failed');
    assert.match((await queue.getJob(jobId))?.failedReason ?? '', /has no fence record: not evacuating/);
    assert.equal(test.sim.evacuateCalls(server.id), 0);
    assert.equal(test.servers([server.id])[0]!.locked, false);
    await queue.close();
  });

  it('an operator-confirmed fence of a host that still reports is not evacuated, although lifeguard forced it down', async () => {
    const test = await bed({ instanceHa: { SMART_EVACUATION: 'true' } });
    const server = test.sim.addServer({ host: 'compute1' });
    // nova-compute died (the incident opened), then came back before the operator's confirmation.
    const { data, jobId } = await downThenBack(test);
    await test.incidents.confirmFencedByOperator('compute1', 'tester', null);
    assert.equal((await test.service('compute1')).state, 'down', 'forced_down makes Nova say down');
    await test.evacuationQueue.add(JOB_NAMES.evacuateHost, data, { jobId });
    await waitFor(
      'the evacuation to be held back twice',
      () =>
        test.messages(
          'Evacuation of compute1 deferred: compute1 confirmed fenced by tester but its updated_at is not older than DELTA yet (state down, forced_down, updated_at',
        ).length >= 2,
    );
    assert.equal(test.sim.evacuateCalls(server.id), 0);
    assert.equal(test.servers([server.id])[0]!.host, 'compute1');
  });

  it('an operator-confirmed fence with the reporting override recorded is evacuated', async () => {
    const test = await bed({ instanceHa: { SMART_EVACUATION: 'true' } });
    const server = test.sim.addServer({ host: 'compute1' });
    const { data, jobId } = await downThenBack(test);
    await test.incidents.confirmFencedByOperator('compute1', 'tester', null, 'state up, updated_at 1 s ago');
    await test.evacuationQueue.add(JOB_NAMES.evacuateHost, data, { jobId });
    const { result } = await test.hostJobOutcome(jobId);
    assert.equal(result?.outcome, 'evacuated');
    assert.equal(test.sim.evacuateCalls(server.id), 1);
    assert.match(
      JSON.stringify(test.logs.records()),
      /compute1 reports to Nova \(state down, forced_down, updated_at \d+ s ago \(DELTA 30 s\)\), overridden by tester/,
    );
  });

  it('refuses when the compute service is up and not forced down', async () => {
    const test = await bed({ instanceHa: { SMART_EVACUATION: 'true' } });
    const server = test.sim.addServer({ host: 'compute1' });
    const { jobId } = await test.failHost('compute1', { kill: false, markNova: false });
    const { failedReason } = await test.hostJobOutcome(jobId);
    assert.match(
      failedReason ?? '',
      /the host is not down: compute1 reports to Nova: state up, updated_at \d+ s ago \(DELTA 30 s\)/,
    );
    assert.equal(test.sim.evacuateCalls(server.id), 0);
  });

  it('refuses a job whose incident belongs to another host', async () => {
    const test = await bed({ instanceHa: { SMART_EVACUATION: 'true' } });
    const server = test.sim.addServer({ host: 'compute1' });
    const other = await test.incidents.openIncident({
      host: 'compute2',
      serviceId: (await test.service('compute2')).id,
      fencingToken: 1,
      kdumpFenced: false,
      evidence: hostDownEvidence('x'),
    });
    const { jobId } = await test.failHost('compute1', { incidentId: other.incident.id });
    const { failedReason } = await test.hostJobOutcome(jobId);
    assert.match(failedReason ?? '', /belongs to host compute2, not compute1/);
    assert.equal(test.sim.evacuateCalls(server.id), 0);
  });

  it('defers the evacuation while the global THRESHOLD is exceeded, and evacuates once it is not', async () => {
    const test = await bed({ instanceHa: { SMART_EVACUATION: 'true', THRESHOLD: '25' } });
    const server = test.sim.addServer({ host: 'compute1' });
    test.sim.killHost('compute2');
    await waitFor(
      'compute2 to be down',
      async () => (await test.service('compute2')).state === 'down',
      10_000,
    );
    const { jobId } = await test.failHost('compute1');
    await waitFor(
      'the evacuation to be deferred',
      () => test.messages('Evacuation of compute1 deferred: 2 of 4 compute hosts').length >= 2,
    );
    assert.equal(test.sim.evacuateCalls(server.id), 0, 'nothing evacuated while 50 % of the hosts are down');
    test.sim.reviveHost('compute2');
    const { result } = await test.hostJobOutcome(jobId);
    assert.equal(result?.outcome, 'evacuated');
    assert.equal(test.sim.evacuateCalls(server.id), 1);
  });

  it('defers the evacuation while DISABLED is true', async () => {
    const test = await bed({ instanceHa: { SMART_EVACUATION: 'true', DISABLED: 'true' } });
    const server = test.sim.addServer({ host: 'compute1' });
    await test.failHost('compute1');
    await waitFor(
      'the evacuation to be deferred',
      () => test.messages('deferred: DISABLED is true;').length >= 2,
    );
    assert.equal(test.sim.evacuateCalls(server.id), 0);
  });
});

describe('reserved hosts (RESERVED_HOSTS)', () => {
  const reserve = async (test: EvacuationBed, host: string) => {
    const service = await test.service(host);
    await test.nova.updateService(service.id, { status: 'disabled', disabled_reason: 'reserved for HA' });
  };

  it('enables the reserved host that shares an aggregate with the failed host and evacuates onto it (FORCE_RESERVED_HOST_EVACUATION)', async () => {
    const test = await bed({
      instanceHa: {
        SMART_EVACUATION: 'true',
        RESERVED_HOSTS: 'true',
        FORCE_RESERVED_HOST_EVACUATION: 'true',
        TAGGED_AGGREGATES: 'true',
      },
    });
    const shared = test.sim.model.addAggregate('ha-a');
    shared.hosts.push('compute1', 'compute3', 'compute4');
    shared.metadata.evacuable = 'true';
    const elsewhere = test.sim.model.addAggregate('ha-b');
    elsewhere.hosts.push('compute2');
    elsewhere.metadata.evacuable = 'true';
    await reserve(test, 'compute2');
    await reserve(test, 'compute3');
    const servers = [test.sim.addServer({ host: 'compute1' }), test.sim.addServer({ host: 'compute1' })];
    const { jobId } = await test.failHost('compute1');
    const { result, failedReason } = await test.hostJobOutcome(jobId);
    assert.equal(result?.outcome, 'evacuated', failedReason ?? '');
    assert.equal(result?.reservedHost, 'compute3');
    for (const server of test.servers(servers.map((each) => each.id))) assert.equal(server.host, 'compute3');
    assert.equal((await test.service('compute3')).status, 'enabled');
    const untouched = await test.service('compute2');
    assert.equal(untouched.status, 'disabled');
    assert.equal(untouched.disabled_reason, 'reserved for HA');
    assert.equal(test.events.of('host.evacuation.started')[0]!.data.reservedHost, 'compute3');
  });

  it('matches a reserved host by availability zone when TAGGED_AGGREGATES is off', async () => {
    const test = await bed({ instanceHa: { SMART_EVACUATION: 'true', RESERVED_HOSTS: 'true' } });
    const east = test.sim.model.addAggregate('east', 'az-east');
    east.hosts.push('compute1', 'compute3');
    const west = test.sim.model.addAggregate('west', 'az-west');
    west.hosts.push('compute2', 'compute4');
    await reserve(test, 'compute2');
    await reserve(test, 'compute3');
    test.sim.addServer({ host: 'compute1' });
    const { jobId } = await test.failHost('compute1');
    const { result } = await test.hostJobOutcome(jobId);
    assert.equal(result?.reservedHost, 'compute3');
    assert.equal((await test.service('compute3')).status, 'enabled');
    assert.equal((await test.service('compute2')).status, 'disabled');
  });

  it('returns the reserved host to the pool when the evacuation failed and nothing landed on it', async () => {
    const test = await bed({
      instanceHa: { SMART_EVACUATION: 'true', RESERVED_HOSTS: 'true', EVACUATION_RETRIES: '1' },
    });
    await reserve(test, 'compute3');
    const server = test.sim.addServer({ host: 'compute1' });
    test.sim.failEvacuations([server.id], 'error');
    const { jobId } = await test.failHost('compute1');
    const { result, failedReason } = await test.hostJobOutcome(jobId);
    assert.equal(result?.outcome, 'failed', failedReason ?? '');
    assert.equal(result?.reservedHost, 'compute3');
    const spare = await test.service('compute3');
    assert.equal(spare.status, 'disabled');
    assert.match(spare.disabled_reason ?? '', /^lifeguard-reserved: /);
  });

  it('gives one spare to only one of two hosts failing at the same time', async () => {
    const test = await bed({
      instanceHa: { SMART_EVACUATION: 'true', RESERVED_HOSTS: 'true', THRESHOLD: '100' },
    });
    await reserve(test, 'compute4');
    test.sim.addServer({ host: 'compute1' });
    test.sim.addServer({ host: 'compute2' });
    const [one, two] = await Promise.all([test.failHost('compute1'), test.failHost('compute2')]);
    const results = await Promise.all([test.hostJobOutcome(one.jobId), test.hostJobOutcome(two.jobId)]);
    assert.deepEqual(
      results.map(({ result }) => result?.outcome),
      ['evacuated', 'evacuated'],
    );
    assert.deepEqual(
      results.map(({ result }) => result?.reservedHost).filter((host) => host !== null),
      ['compute4'],
    );
  });
});
