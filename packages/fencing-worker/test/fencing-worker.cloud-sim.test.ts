import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { CloudSim } from '@lifeguard/cloud-sim';
import {
  createEvent,
  evacuateHostJobId,
  fencingJobId,
  JOB_NAMES,
  JOB_QUEUES,
  powerOnJobId,
} from '@lifeguard/contracts';
import { parseDisabledReason } from '@lifeguard/instance-ha';
import { hostDownEvidence, takeDeadLetterReasons, waitFor } from '@lifeguard/testing';
import { startFencingCloud } from './support/fencing-cloud.ts';
import { WorkerTestBed } from './support/worker-test-bed.ts';

describe('fencing worker against cloud-sim: Redfish fencing, Nova marking, power-on after evacuation', () => {
  let sim: CloudSim;
  let bed: WorkerTestBed;

  before(async () => {
    const cloud = await startFencingCloud(3);
    sim = cloud.sim;
    const { compute } = cloud;
    for (const host of sim.model.hosts.values())
      host.bmc.password = `Rf-${Math.random().toString(36).slice(2, 12)}`;
    bed = await WorkerTestBed.create('fencing-cloudsim', { compute });
  });

  afterEach(async () => {
    await bed.stopWorkers();
    await bed.closeOpenIncidents();
    for (const host of sim.model.hosts.keys()) {
      sim.setBmcQuirks(host, { unreachable: false, alreadyOffStatus: 204, rejectOnAfterForceOff: 0 });
      sim.reviveHost(host);
      await bed.resetService(host);
    }
  });

  /** A fence re-checks that the host is down in Nova: the tests let Nova see it down first. */
  const downInNova = (host: string) =>
    waitFor(`${host} down in Nova`, async () => (await bed.service(host)).state === 'down', 20_000);

  after(async () => {
    const stored = await bed.storedText();
    const published = JSON.stringify(await bed.published());
    await bed.close();
    await sim.close();
    for (const host of sim.model.hosts.values()) {
      assert.ok(!bed.logs.text.includes(host.bmc.password), 'a BMC password was logged');
      assert.ok(!stored.includes(host.bmc.password), 'a BMC password is stored in Redis');
      assert.ok(!published.includes(host.bmc.password), 'a BMC password is in an event');
    }
  });

  const entry = (host: string, agent: 'redfish' | 'fence_redfish') => {
    const bmc = sim.bmc(host);
    const common = `ipaddr: ${bmc.address}, ipport: ${bmc.port}, login: ${bmc.username}, passwd: "${bmc.password}"`;
    return agent === 'redfish'
      ? `{ agent: redfish, ${common}, uuid: ${sim.model.host(host).bmc.systemId}, tls: "true", ssl_verify: false, expected_system_uuid: ${sim.model.host(host).bmc.uuid} }`
      : `{ agent: fence_redfish, ${common}, options: { ssl_insecure: 1, power_timeout: 3 } }`;
  };

  it('a failed host is fenced through its Redfish BMC (topology: native, then fence_redfish), marked in Nova, handed off, and powered on again despite a refused On; a power-on run again for the incident repeats host.powered-on under the same id', async () => {
    const host = 'compute2';
    // The native method's BMC is unreachable: the topology falls through to fence_redfish.
    sim.setBmcQuirks(host, { alreadyOffStatus: 409, rejectOnAfterForceOff: 1 });
    await bed.startWorker({
      fencingYaml: `FencingConfig:\n  ${host}:\n    methods:\n      - { agent: redfish, ipaddr: 127.0.0.1, ipport: 9, login: admin, passwd: "x", tls: "true", ssl_verify: false, timeout: 5 }\n      - ${entry(host, 'fence_redfish')}\n`,
    });
    sim.killHost(host);
    await downInNova(host);
    const { incident } = await bed.hostDown(host);
    const job = await bed.jobIn(
      bed.queue(JOB_QUEUES.fencing),
      fencingJobId(host, incident.id),
      'completed',
      60_000,
    );
    assert.equal(job.returnvalue.method, 'fence_redfish');
    assert.equal(sim.powerState(host), 'Off');
    const states = sim.hostStates().find((each) => each.host === host);
    assert.equal(states?.forcedDown, true);
    assert.equal(states?.status, 'disabled');
    const service = await bed.service(host);
    assert.equal(parseDisabledReason(service.disabled_reason).incidentId, incident.id);
    assert.ok(await bed.queue(JOB_QUEUES.evacuation).getJob(evacuateHostJobId(host, incident.id)));
    const stored = await bed.incidents.get(incident.id);
    assert.match(stored?.fence?.note ?? '', /redfish 127\.0\.0\.1:9 failed first/);

    await bed
      .queue(JOB_QUEUES.fencing)
      .add(
        JOB_NAMES.powerOn,
        { host, incidentId: incident.id },
        { jobId: powerOnJobId(host, incident.id), attempts: 3 },
      );
    await waitFor('the host to be on again', () => sim.powerState(host) === 'On', 30_000);
    await waitFor('host.powered-on', async () =>
      (await bed.published('host.powered-on')).some((event) => event.data.incidentId === incident.id),
    );
    // The power-on job run again, as after its worker was killed between publishing host.powered-on
    // and the job's completion: the host is on already, and the event is the same one again.
    await bed
      .queue(JOB_QUEUES.fencing)
      .add(
        JOB_NAMES.powerOn,
        { host, incidentId: incident.id },
        { jobId: `${powerOnJobId(host, incident.id)}.run-again`, attempts: 3 },
      );
    const poweredOn = await waitFor('host.powered-on published again', async () => {
      const events = (await bed.published('host.powered-on')).filter(
        (event) => event.data.incidentId === incident.id,
      );
      return events.length >= 2 && events;
    });
    assert.equal(new Set(poweredOn.map((event) => event.id)).size, 1, 'one id for the one transition');
    await bed.incidents.close(incident.id, 'test done');
  });

  it('a fence that failed for a reason a retry can fix is retried: at once on a new host.down, else after LIFEGUARD_FENCING_RETRY_FAILED_AFTER_SECONDS', async () => {
    const [first, second] = ['compute1', 'compute3'];
    for (const host of [first, second]) {
      sim.setBmcQuirks(host, { unreachable: true });
      sim.killHost(host);
    }
    for (const host of [first, second]) await downInNova(host);
    await bed.startWorker({
      fencingYaml: `FencingConfig:\n  ${first}: ${entry(first, 'redfish')}\n  ${second}: ${entry(second, 'redfish')}\n`,
      // Two of the three hosts are down: 66.7 %, within THRESHOLD 70.
      configYaml: '  FENCING_TIMEOUT: "10"\n  THRESHOLD: "70"',
      settings: {
        LIFEGUARD_FENCING_ATTEMPTS: '2',
        LIFEGUARD_FENCING_RECONCILE_SECONDS: '0.5',
        LIFEGUARD_FENCING_RETRY_FAILED_AFTER_SECONDS: '4',
      },
    });
    const fencing = bed.queue(JOB_QUEUES.fencing);
    const one = await bed.hostDown(first);
    const two = await bed.hostDown(second);
    for (const { incident } of [one, two]) {
      const job = await bed.jobIn(fencing, fencingJobId(incident.host, incident.id), 'failed', 60_000);
      assert.equal(job.attemptsMade, 2);
      const failure = await waitFor('host.fencing.failed', async () =>
        (await bed.published('host.fencing.failed')).find((event) => event.data.incidentId === incident.id),
      );
      assert.equal(failure.data.recoverable, true);
      const service = await bed.service(incident.host);
      assert.deepEqual([service.forced_down, service.status], [false, 'enabled'], 'Nova untouched');
    }
    for (const host of [first, second]) sim.setBmcQuirks(host, { unreachable: false });
    // The first host is announced again (same incident, the monitor's current token): the intake
    // retries its job at once.
    await bed.hostDown(first);
    await bed.jobIn(fencing, fencingJobId(first, one.incident.id), 'completed', 30_000);
    assert.ok(
      bed.logs
        .records()
        .some(
          (line) =>
            line.incidentId === one.incident.id && line.msg === 'failed fence job retried on a new host.down',
        ),
    );
    // The second is not: the reconciler retries it once the wait has passed.
    await bed.jobIn(fencing, fencingJobId(second, two.incident.id), 'completed', 30_000);
    assert.ok(
      bed.logs
        .records()
        .some((line) => line.incidentId === two.incident.id && line.msg === 'failed fence job retried'),
    );
    assert.deepEqual([sim.powerState(first), sim.powerState(second)], ['Off', 'Off']);
    for (const { incident } of [one, two]) {
      const fenced = await waitFor(`host.fenced of ${incident.host}`, async () =>
        (await bed.published('host.fenced')).find((event) => event.data.incidentId === incident.id),
      );
      assert.equal(fenced.data.attempts, 3, 'the two failed attempts and the one that fenced');
      await bed.incidents.close(incident.id, 'test done');
    }
  });

  it("host.down events of one leader's term, handled at once in whatever order, are all taken in: a fence job each, none dropped as stale", async () => {
    const hosts = [...sim.model.hosts.keys()];
    await bed.startWorker({
      fencingYaml: `FencingConfig:\n${hosts.map((host) => `  ${host}: ${entry(host, 'redfish')}`).join('\n')}\n`,
    });
    // The hosts run: each job's re-check finds its host reporting and closes the incident unfenced.
    const downs = await Promise.all(hosts.map((host) => bed.hostDown(host)));
    assert.equal(new Set(downs.map(({ event }) => event.data.fencingToken)).size, 1, 'one leader, one token');
    const fencing = bed.queue(JOB_QUEUES.fencing);
    for (const { incident } of downs) {
      await waitFor(`the fence job of ${incident.host}`, () =>
        fencing.getJob(fencingJobId(incident.host, incident.id)),
      );
    }
    assert.ok(
      !bed.logs
        .records()
        .some((line) => String(line.msg).startsWith('host.down from a stale node monitor dropped')),
    );
    for (const { incident } of downs) {
      await waitFor(
        `${incident.host} left alone`,
        async () => (await bed.incidents.get(incident.id))?.state === 'closed',
      );
    }
    assert.deepEqual(
      hosts.map((host) => sim.powerState(host)),
      hosts.map(() => 'On'),
      'nothing fenced',
    );
  });

  it('a host.down carrying a fencing token the leader lease never issued is dead-lettered and raises nothing: the real leader is still heard', async () => {
    const host = 'compute2';
    sim.killHost(host);
    await downInNova(host);
    await bed.startWorker({ fencingYaml: `FencingConfig:\n  ${host}: ${entry(host, 'redfish')}\n` });
    // The leader opened an incident; two forged events carry a token 90 above it: one naming no
    // incident (a new user's reproduction), one naming the real, open one.
    const token = await bed.issueToken();
    const forged = token + 90;
    const highestKey = `${bed.keyPrefix}:fencing-worker:highest-fencing-token`;
    const highestBefore = await bed.redis.get(highestKey);
    const service = await bed.service(host);
    const evidence = hostDownEvidence(service.id);
    const { incident } = await bed.incidents.openIncident({
      host,
      serviceId: service.id,
      fencingToken: token,
      kdumpFenced: false,
      resume: false,
      evidence,
    });
    const hostDown = (incidentId: string, fencingToken: number) =>
      createEvent(
        'host.down',
        { host, incidentId, fencingToken, evidence, kdumpFenced: false, resume: false },
        { service: 'node-monitor', instance: 'test' },
      );
    await bed.events.publishEvent(hostDown('compute2.20261130T150000Z.abcd', forged));
    await bed.events.publishEvent(hostDown(incident.id, forged));
    const reasons: string[] = [];
    await waitFor('two dead letters', async () => {
      reasons.push(...(await takeDeadLetterReasons(bed.amqp)));
      return reasons.length >= 2;
    });
    assert.match(reasons[0]!, /incident compute2\.20261130T150000Z\.abcd of host compute2 does not exist/);
    assert.equal(
      reasons[1],
      `fencing token ${forged} was never issued by the leader lease (highest issued: ${token})`,
    );
    assert.equal(await bed.redis.get(highestKey), highestBefore, 'the highest token seen is unchanged');
    // The leader's own host.down is taken in and fenced.
    await bed.events.publishEvent(hostDown(incident.id, token));
    await waitFor('the host fenced', async () =>
      (await bed.published('host.fenced')).some((each) => each.data.incidentId === incident.id),
    );
    assert.equal(sim.powerState(host), 'Off');
  });

  it('counts a fence that failed for good as awaiting an operator (lifeguard_fencing_awaiting_operator) until its incident closes', async () => {
    const [listed, unlisted] = ['compute1', 'compute2'];
    const worker = await bed.startWorker({
      fencingYaml: `FencingConfig:\n  ${listed}: ${entry(listed, 'redfish')}\n`,
      settings: { LIFEGUARD_FENCING_RECONCILE_SECONDS: '0.5' },
    });
    const awaiting = async () => (await worker.metrics.awaitingOperator.get()).values[0]?.value ?? 0;
    sim.model.powerOff(unlisted);
    await downInNova(unlisted);
    const { incident } = await bed.hostDown(unlisted);
    await bed.jobIn(bed.queue(JOB_QUEUES.fencing), fencingJobId(unlisted, incident.id), 'failed', 60_000);
    await waitFor('one fence awaiting an operator', async () => (await awaiting()) === 1, 10_000, 100);
    await bed.incidents.close(incident.id, 'operator gave up on it');
    await waitFor(
      'none awaiting once the incident closed',
      async () => (await awaiting()) === 0,
      10_000,
      100,
    );
  });

  it('with DISABLED, host.down still becomes a stored job, but nothing is fenced', async () => {
    const host = 'compute1';
    sim.model.powerOn(host);
    const worker = await bed.startWorker({
      fencingYaml: `FencingConfig:\n  ${host}: ${entry(host, 'redfish')}\n`,
      configYaml: '  DISABLED: "true"',
    });
    assert.equal(worker.worker.isRunning(), false);
    const { incident } = await bed.hostDown(host);
    await waitFor('the job to be stored', () =>
      bed.logs.records().some((line) => line.incidentId === incident.id && line.msg === 'fence job stored'),
    );
    assert.equal(
      await (await bed.queue(JOB_QUEUES.fencing).getJob(fencingJobId(host, incident.id)))?.getState(),
      'waiting',
    );
    assert.equal(sim.powerState(host), 'On');
    assert.equal((await bed.service(host)).forced_down, false);
  });

  it('the native redfish driver with the expected system UUID fences a host whose BMC answers "already off" with 409', async () => {
    const host = 'compute3';
    sim.setBmcQuirks(host, { alreadyOffStatus: 409 });
    sim.model.powerOff(host);
    await downInNova(host);
    await bed.startWorker({ fencingYaml: `FencingConfig:\n  ${host}: ${entry(host, 'redfish')}\n` });
    const { incident } = await bed.hostDown(host);
    const job = await bed.jobIn(
      bed.queue(JOB_QUEUES.fencing),
      fencingJobId(host, incident.id),
      'completed',
      30_000,
    );
    assert.deepEqual([job.returnvalue.proof, job.returnvalue.method], ['power-off-confirmed', 'redfish']);
    assert.match((await bed.incidents.get(incident.id))?.fence?.note ?? '', /already off/);
    await bed.incidents.close(incident.id, 'test done');
  });
});
