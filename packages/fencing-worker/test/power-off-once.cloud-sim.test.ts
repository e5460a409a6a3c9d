// Two runs of one fence job — the first slow in its power-off past its BullMQ job lock, the second the
// run BullMQ handed the job to — send one power-off to the BMC, and the incident shows one fence
// (docs/safety-rules.md#rule-3-one-incident-per-host).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CloudSim, RecordedRequest } from '@lifeguard/cloud-sim';
import { evacuateHostJobId, fencingJobId, JOB_QUEUES } from '@lifeguard/contracts';
import { bullmqPrefix } from '@lifeguard/runtime';
import { waitFor } from '@lifeguard/testing';
import { startFencingCloud } from './support/fencing-cloud.ts';
import { WorkerTestBed } from './support/worker-test-bed.ts';

describe('a fence job run twice after its lock lapsed', () => {
  let sim: CloudSim;
  let bed: WorkerTestBed;

  before(async () => {
    const cloud = await startFencingCloud(3);
    sim = cloud.sim;
    const { compute } = cloud;
    bed = await WorkerTestBed.create('fencing-power-off-once', { compute });
  });

  after(async () => {
    await bed.stopWorkers();
    await bed.closeOpenIncidents();
    await bed.close();
    await sim.close();
  });

  const isForceOff = (request: RecordedRequest) =>
    request.listener === 'redfish' &&
    request.url.endsWith('/Actions/ComputerSystem.Reset') &&
    (request.body as { ResetType?: unknown } | undefined)?.ResetType === 'ForceOff';

  it('powers its host off once: the second run finds the power-off claim and uses the first run’s fence record', async () => {
    const host = 'compute3';
    const bmc = sim.bmc(host);
    const system = sim.model.host(host).bmc;
    const method = `{ agent: redfish, ipaddr: ${bmc.address}, ipport: ${bmc.port}, login: ${bmc.username}, passwd: "${bmc.password}", uuid: ${system.systemId}, tls: "true", ssl_verify: false, timeout: 60 }`;
    const fencingYaml = `FencingConfig:\n  ${host}: ${method}\n`;
    await bed.startWorker({ fencingYaml });
    await bed.startWorker({ fencingYaml });
    // The first power-off reaches the BMC and is held there until the test lets it act.
    let letGo!: () => void;
    const released = new Promise<undefined>((resolve) => {
      letGo = () => resolve(undefined);
    });
    let held = false;
    const stopObserving = sim.requests.observe((request, phase) => {
      if (phase !== 'before-effect' || !isForceOff(request) || held) return undefined;
      held = true;
      return released;
    });
    const forceOffs = () => sim.requests.matching(isForceOff).length;
    sim.killHost(host);
    await waitFor(`${host} down in Nova`, async () => (await bed.service(host)).state === 'down', 20_000);
    const { incident } = await bed.hostDown(host);
    const jobId = fencingJobId(host, incident.id);
    await waitFor('the first run’s power-off at the BMC', () => held, 30_000, 20);
    // Its job lock lapses: BullMQ's stalled-job check hands the job to another run.
    await bed.redis.del(`${bullmqPrefix(bed.keyPrefix)}:${JOB_QUEUES.fencing}:${jobId}:lock`);
    await waitFor(
      'the second run to decide about its power-off',
      () => forceOffs() > 1 || bed.logs.text.includes('fence deferred by power-off-claim'),
      30_000,
      20,
    );
    letGo();
    stopObserving();
    await bed.jobIn(bed.queue(JOB_QUEUES.fencing), jobId, 'completed', 60_000);
    assert.equal(forceOffs(), 1, 'one power-off reached the BMC');
    assert.ok(bed.logs.text.includes('job taken over from a worker that stopped answering'));
    assert.ok(bed.logs.text.includes('is powering the host off'), 'the second run found the claim');
    assert.equal(sim.powerState(host), 'Off');
    const stored = await bed.incidents.get(incident.id);
    assert.equal(stored?.fence?.proof, 'power-off-confirmed');
    const fenced = (await bed.published('host.fenced')).filter(
      (event) => event.data.incidentId === incident.id,
    );
    assert.equal(fenced.length, 1, 'one host.fenced');
    const handOffs = (
      await bed.queue(JOB_QUEUES.evacuation).getJobs(['waiting', 'delayed', 'active', 'completed'])
    ).filter((job) => job.data.incidentId === incident.id);
    assert.deepEqual(
      handOffs.map((job) => job.id),
      [evacuateHostJobId(host, incident.id)],
    );
  });
});
