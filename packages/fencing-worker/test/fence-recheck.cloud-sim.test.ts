import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { CloudSim } from '@lifeguard/cloud-sim';
import { evacuateHostJobId, fencingJobId, JOB_NAMES, JOB_QUEUES } from '@lifeguard/contracts';
import { bullmqPrefix } from '@lifeguard/runtime';
import { REDIS_URL, waitFor } from '@lifeguard/testing';
import { type Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { startFencingCloud } from './support/fencing-cloud.ts';
import { WorkerTestBed } from './support/worker-test-bed.ts';

/**
 * Every fence re-checks the world at the moment it would run: a host that came back between the
 * first decision and a retry, a takeover or the end of a kdump wait is closed as recovered and left
 * alone; a gate that can change (THRESHOLD) defers the fence instead of failing it.
 */
describe('fence re-check against cloud-sim: a host that came back is never fenced', () => {
  let sim: CloudSim;
  let bed: WorkerTestBed;

  before(async () => {
    const cloud = await startFencingCloud(4);
    sim = cloud.sim;
    const { compute } = cloud;
    bed = await WorkerTestBed.create('fence-recheck', { compute });
  });

  afterEach(async () => {
    await bed.stopWorkers();
    await bed.closeOpenIncidents();
    for (const host of sim.model.hosts.keys()) {
      sim.setBmcQuirks(host, { unreachable: false });
      sim.heal([host]);
      sim.reviveHost(host);
      await bed.resetService(host);
    }
  });

  after(async () => {
    await bed.close();
    await sim.close();
  });

  const redfish = (host: string) => {
    const bmc = sim.bmc(host);
    return `{ agent: redfish, ipaddr: ${bmc.address}, ipport: ${bmc.port}, login: ${bmc.username}, passwd: "${bmc.password}", uuid: ${sim.model.host(host).bmc.systemId}, tls: "true", ssl_verify: false, timeout: 3 }`;
  };
  const downInNova = (host: string) =>
    waitFor(`${host} down in Nova`, async () => (await bed.service(host)).state === 'down', 20_000);
  const upInNova = (host: string) =>
    waitFor(`${host} up in Nova`, async () => (await bed.service(host)).state === 'up', 20_000);
  const recoveredEvent = (incidentId: string) =>
    waitFor(`host.recovered of ${incidentId}`, async () =>
      (await bed.published('host.recovered')).find((event) => event.data.incidentId === incidentId),
    );

  const fenceDeferred = (fencing: Queue, jobId: string) =>
    waitFor(
      'the fence deferred',
      async () => (await (await fencing.getJob(jobId))?.getState()) === 'delayed',
    );
  /** The worker logged the deferral by `gate`, with POLL 15 s. */
  const deferralLogged = (incidentId: string, gate: string) =>
    bed.logs
      .records()
      .some(
        (line) =>
          line.incidentId === incidentId && line.msg === `fence deferred by ${gate}; checking again in 15 s`,
      );

  /**
   * `host` killed and down in Nova, a fencing worker started with `host`'s Redfish BMC and
   * `configYaml`, and the node monitor's host.down for it: the incident it opened.
   */
  async function killAndHandToWorker(host: string, configYaml: string, registry?: Registry) {
    sim.killHost(host);
    await downInNova(host);
    await bed.startWorker({
      fencingYaml: `FencingConfig:\n  ${host}: ${redfish(host)}\n`,
      configYaml,
      ...(registry ? { registry } : {}),
    });
    return (await bed.hostDown(host)).incident;
  }

  /** Every one of `hosts` disabled by an operator: no room for anyone's servers there. */
  async function disableForMaintenance(hosts: ReadonlyArray<string>) {
    for (const host of hosts) {
      const service = await bed.service(host);
      await bed.compute.updateService(service.id, { status: 'disabled', disabled_reason: 'maintenance' });
    }
  }

  /** The host is left alone: powered on, not forced down, enabled, nothing fenced or evacuated. */
  async function assertLeftAlone(host: string, incidentId: string) {
    assert.equal(sim.powerState(host), 'On');
    const service = await bed.service(host);
    assert.deepEqual([service.forced_down, service.status, service.state], [false, 'enabled', 'up']);
    const fenced = await bed.published('host.fenced');
    assert.ok(!fenced.some((event) => event.data.incidentId === incidentId), 'no host.fenced');
    assert.equal(
      await bed.queue(JOB_QUEUES.evacuation).getJob(evacuateHostJobId(host, incidentId)),
      undefined,
    );
    const incident = await bed.incidents.get(incidentId);
    assert.deepEqual([incident?.state, incident?.outcome, incident?.fence], ['closed', 'recovered', null]);
  }

  it('a failed fence retried by the reconciler after the host healed closes the incident as recovered and powers nothing off', async () => {
    const host = 'compute2';
    sim.setBmcQuirks(host, { unreachable: true });
    sim.partition([host]);
    await downInNova(host);
    await bed.startWorker({
      fencingYaml: `FencingConfig:\n  ${host}: ${redfish(host)}\n`,
      settings: {
        LIFEGUARD_FENCING_ATTEMPTS: '1',
        LIFEGUARD_FENCING_RECONCILE_SECONDS: '0.5',
        LIFEGUARD_FENCING_RETRY_FAILED_AFTER_SECONDS: '3',
      },
    });
    const { incident } = await bed.hostDown(host);
    await waitFor('host.fencing.failed', async () =>
      (await bed.published('host.fencing.failed')).some((event) => event.data.incidentId === incident.id),
    );
    sim.setBmcQuirks(host, { unreachable: false });
    sim.heal([host]);
    await upInNova(host);
    const recovered = await recoveredEvent(incident.id);
    assert.equal(recovered.data.gate, 'host-down');
    assert.equal(recovered.data.action, 'fence');
    assert.match(
      recovered.data.reason,
      /compute2 reports to Nova: state up, updated_at \d+ s ago \(DELTA \d+ s\)/,
    );
    assert.ok(
      bed.logs
        .records()
        .some((line) => line.incidentId === incident.id && line.msg === 'failed fence job retried'),
      'the reconciler did retry the job',
    );
    await assertLeftAlone(host, incident.id);
  });

  it('a fence job taken over from a dead worker (its lock expired) after the host healed closes as recovered', async () => {
    const host = 'compute3';
    sim.killHost(host);
    await downInNova(host);
    const fencing = bed.queue(JOB_QUEUES.fencing);
    const { incident } = await bed.incidents.openIncident({
      host,
      serviceId: (await bed.service(host)).id,
      fencingToken: await bed.issueToken(),
      kdumpFenced: false,
      resume: false,
      evidence: {
        serviceId: (await bed.service(host)).id,
        state: 'down',
        status: 'enabled',
        forcedDown: false,
        updatedAt: null,
        ageSeconds: null,
        disabledReason: null,
        zone: 'nova',
      },
    });
    const jobId = fencingJobId(host, incident.id);
    await fencing.add(
      JOB_NAMES.fence,
      {
        host,
        serviceId: incident.serviceId,
        incidentId: incident.id,
        fencingToken: incident.fencingToken,
        kdumpFenced: false,
        resume: false,
        detectedAt: new Date().toISOString(),
      },
      { jobId, attempts: 3 },
    );
    // A worker takes the job and dies: it never finishes it nor renews its 2 s lock.
    const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const dead = new Worker(JOB_QUEUES.fencing, null, {
      connection,
      prefix: bullmqPrefix(bed.keyPrefix),
      lockDuration: 2000,
    });
    const taken = await dead.getNextJob('dead-worker-token');
    assert.equal(taken?.id, jobId);
    await dead.close();
    connection.disconnect();
    sim.reviveHost(host);
    await upInNova(host);
    await bed.startWorker({ fencingYaml: `FencingConfig:\n  ${host}: ${redfish(host)}\n` });
    await recoveredEvent(incident.id);
    assert.ok(
      bed.logs.records().some((line) => line.msg === 'job taken over from a worker that stopped answering'),
    );
    await assertLeftAlone(host, incident.id);
  });

  it('the end of a kdump wait re-checks: a host that came back during KDUMP_TIMEOUT is not powered off', async () => {
    const host = 'compute1';
    const incident = await killAndHandToWorker(host, '  CHECK_KDUMP: "true"\n  KDUMP_TIMEOUT: "6"');
    await waitFor('the kdump wait to start', () =>
      bed.logs
        .records()
        .some((line) => line.incidentId === incident.id && line.msg === 'waiting for fence_kdump packets'),
    );
    sim.reviveHost(host);
    const recovered = await recoveredEvent(incident.id);
    assert.ok(
      bed.logs
        .records()
        .some(
          (line) =>
            line.incidentId === incident.id && /after the kdump wait: recovered/.test(String(line.msg)),
        ),
    );
    assert.equal(recovered.data.gate, 'host-down');
    await assertLeftAlone(host, incident.id);
  });

  it("an earlier crash's fence_kdump packet, from before the host's last report, does not make this failure kdump-fenced", async () => {
    const host = 'compute2';
    // A packet a few seconds ago (a crash the host came back from), then its last report, then it fails.
    await bed.kdump.recordPacket(host, new Date(Date.now() - 3_000));
    const lastReportAt = new Date(Date.now() - 1_000);
    sim.killHost(host);
    await downInNova(host);
    await bed.startWorker({
      fencingYaml: `FencingConfig:\n  ${host}: ${redfish(host)}\n`,
      configYaml: '  CHECK_KDUMP: "true"\n  KDUMP_TIMEOUT: "30"',
    });
    const { incident } = await bed.hostDown(host, { lastReportAt });
    // The old packet is within KDUMP_TIMEOUT, yet the worker waits for one of this failure.
    await waitFor('the kdump wait to start', () =>
      bed.logs
        .records()
        .some((line) => line.incidentId === incident.id && line.msg === 'waiting for fence_kdump packets'),
    );
    assert.equal((await bed.incidents.get(incident.id))?.fence ?? null, null, 'not fenced on the old packet');
    await bed.kdump.recordPacket(host);
    const fence = await waitFor(
      'the fence recorded',
      async () => (await bed.incidents.get(incident.id))?.fence ?? undefined,
    );
    assert.equal(fence.proof, 'kdump', JSON.stringify(fence));
  });

  it('THRESHOLD exceeded defers the fence (no attempt spent, incident open); once a host is back it is fenced', async () => {
    const [victim, other, third] = ['compute1', 'compute2', 'compute3'];
    for (const host of [victim, other, third]) sim.killHost(host);
    for (const host of [victim, other, third]) await downInNova(host);
    await bed.startWorker({
      fencingYaml: `FencingConfig:\n  ${victim}: ${redfish(victim)}\n`,
      configYaml: '  POLL: "15"\n  THRESHOLD: "50"',
    });
    const { incident } = await bed.hostDown(victim);
    const fencing = bed.queue(JOB_QUEUES.fencing);
    const jobId = fencingJobId(victim, incident.id);
    await fenceDeferred(fencing, jobId);
    assert.ok(deferralLogged(incident.id, 'threshold'));
    assert.equal(sim.powerState(victim), 'On');
    assert.equal((await bed.incidents.get(incident.id))?.state, 'open');
    assert.equal((await fencing.getJob(jobId))?.attemptsMade, 0, 'a deferral is not an attempt');
    for (const host of [other, third]) sim.reviveHost(host);
    await (await fencing.getJob(jobId))?.promote();
    await bed.jobIn(fencing, jobId, 'completed', 30_000);
    assert.equal(sim.powerState(victim), 'Off');
    await bed.incidents.close(incident.id, 'test done');
  });

  it('no room: with every other compute host disabled the host is not powered off, host.capacity.insufficient says why; once one is enabled it is fenced', async () => {
    const [victim, ...others] = ['compute1', 'compute2', 'compute3', 'compute4'];
    sim.addServer({ host: victim, name: 'needs-room' });
    sim.addServer({ host: victim, name: 'scratch', metadata: { evacuable: 'false' } });
    await disableForMaintenance(others);
    const powerOffsBefore = sim.powerActions(victim).off;
    const registry = new Registry();
    const incident = await killAndHandToWorker(victim, '  POLL: "15"', registry);
    const fencing = bed.queue(JOB_QUEUES.fencing);
    const jobId = fencingJobId(victim, incident.id);
    await fenceDeferred(fencing, jobId);
    const [event] = (await bed.published('host.capacity.insufficient')).filter(
      (each) => each.data.incidentId === incident.id,
    );
    assert.ok(event, 'host.capacity.insufficient published');
    assert.equal(event.data.serverCount, 1, 'the server that asks not to be moved is not counted');
    assert.equal(
      event.data.reason,
      'no compute host can take the 1 server(s) of compute1: of 3 other compute host(s), 3 disabled (RESERVED_HOSTS is off: spares do not count)',
    );
    assert.deepEqual(
      event.data.unavailable.map((each) => [each.host, each.why]),
      others.map((host) => [host, 'disabled']),
    );
    assert.ok(deferralLogged(incident.id, 'capacity'));
    assert.match(await registry.metrics(), /^lifeguard_fence_deferred_total\{gate="capacity"\} 1$/m);
    assert.equal(sim.powerState(victim), 'On');
    assert.equal(sim.powerActions(victim).off, powerOffsBefore, 'no power-off sent');
    assert.equal((await bed.incidents.get(incident.id))?.state, 'open');
    assert.equal((await fencing.getJob(jobId))?.attemptsMade, 0, 'a deferral is not an attempt');
    await bed.resetService('compute3');
    await (await fencing.getJob(jobId))?.promote();
    await bed.jobIn(fencing, jobId, 'completed', 30_000);
    assert.equal(sim.powerState(victim), 'Off');
    await bed.incidents.close(incident.id, 'test done');
  });

  it('with TAGGED_FLAVORS in effect, servers the evacuation would leave out need no room: with every other host disabled the host is fenced', async () => {
    const [victim, ...others] = ['compute1', 'compute2', 'compute3', 'compute4'];
    sim.model.addFlavor({ id: 'ha', name: 'm1.ha', extraSpecs: { evacuable: 'true' } });
    try {
      sim.addServer({ host: victim, name: 'untagged', flavorId: '1' });
      await disableForMaintenance(others);
      const incident = await killAndHandToWorker(victim, '  POLL: "15"');
      const fencing = bed.queue(JOB_QUEUES.fencing);
      await bed.jobIn(fencing, fencingJobId(victim, incident.id), 'completed', 30_000);
      assert.equal(sim.powerState(victim), 'Off');
      const held = (await bed.published('host.capacity.insufficient')).filter(
        (each) => each.data.incidentId === incident.id,
      );
      assert.deepEqual(held, [], 'no capacity hold for a server that would not be evacuated');
      assert.ok(
        bed.logs.records().some((line) => line.msg === `capacity: ${victim} has no server to evacuate`),
        'the capacity gate counted no server',
      );
      await bed.incidents.close(incident.id, 'test done');
    } finally {
      sim.model.flavors.delete('ha');
    }
  });
});
