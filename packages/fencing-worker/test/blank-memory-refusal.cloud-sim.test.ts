import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { CloudSim } from '@lifeguard/cloud-sim';
import {
  evacuateHostJobId,
  type FencingJobData,
  fencingJobId,
  JOB_NAMES,
  JOB_QUEUES,
} from '@lifeguard/contracts';
import { DeploymentGeneration, generationMarkerKey, redisKey } from '@lifeguard/runtime';
import { waitFor } from '@lifeguard/testing';
import type { FencingWorker } from '../src/index.ts';
import { startFencingCloud } from './support/fencing-cloud.ts';
import { WorkerTestBed } from './support/worker-test-bed.ts';

/**
 * A fence is refused on a blank memory (docs/failure-modes.md#redis-restarted-empty): while Redis
 * holds no deployment generation marker although the worker saw one, or the marker's rebuild from
 * Nova is `pending`, a fence job powers nothing off, writes nothing to Nova and waits POLL seconds
 * without spending an attempt; a fence job whose incident Redis does not hold ends. Each refusal is
 * logged at error and counted in `lifeguard_fence_refused_total{reason}`.
 *
 * The test plays the node monitor's part with the runtime's DeploymentGeneration (`observe` writes
 * the marker, `pending` after a loss; `markRebuilt` ends the rebuild), and reads the outcome from
 * cloud-sim's BMC, its Nova, the fence agents the worker ran, the worker's metrics and its log.
 */
describe('blank memory against cloud-sim: no fence while Redis memory is lost or being rebuilt', () => {
  let sim: CloudSim;
  let bed: WorkerTestBed;
  /** `off` runs of fence_redfish by the test's worker. */
  let powerOffRuns = 0;
  /** Each host's BMC power-off count when the test began (cloud-sim counts them for the whole run). */
  const powerOffsBefore = new Map<string, number>();
  /** How many times the host's BMC switched it off during this test. */
  const bmcPowerOffs = (host: string) => sim.powerActions(host).off - (powerOffsBefore.get(host) ?? 0);
  const countPowerOffs = {
    onSpawn: (_pid: number, action: string) => {
      if (action === 'off') powerOffRuns++;
    },
  };

  before(async () => {
    const cloud = await startFencingCloud(4);
    sim = cloud.sim;
    const { compute } = cloud;
    bed = await WorkerTestBed.create('blank-memory', { compute });
  });

  beforeEach(() => {
    for (const host of sim.model.hosts.keys()) powerOffsBefore.set(host, sim.powerActions(host).off);
  });

  afterEach(async () => {
    await bed.stopWorkers();
    await bed.closeOpenIncidents();
    await bed.redis.del(generationMarkerKey(bed.keyPrefix));
    powerOffRuns = 0;
    for (const host of sim.model.hosts.keys()) {
      sim.reviveHost(host);
      await bed.resetService(host);
    }
    for (const host of sim.model.hosts.keys())
      await waitFor(`${host} up in Nova`, async () => (await bed.service(host)).state === 'up', 20_000);
  });

  after(async () => {
    await bed.close();
    await sim.close();
  });

  /** The real fence_redfish against the host's cloud-sim BMC. */
  const fenceRedfish = (host: string) => {
    const bmc = sim.bmc(host);
    return `{ agent: fence_redfish, ipaddr: ${bmc.address}, ipport: ${bmc.port}, login: ${bmc.username}, passwd: "${bmc.password}", options: { ssl_insecure: 1, power_timeout: 3 } }`;
  };

  /** A worker that fences `host` by fence_redfish; POLL 60 s, so a deferred job waits until promoted. */
  const startWorker = (host: string, configYaml = '  POLL: "60"') =>
    bed.startWorker({
      fencingYaml: `FencingConfig:\n  ${host}: ${fenceRedfish(host)}\n`,
      configYaml,
      fenceAgentHooks: countPowerOffs,
    });

  /** nova-compute of `host` dies (its power stays on) and Nova reports the service down. */
  async function crash(host: string): Promise<void> {
    sim.killHost(host);
    await waitFor(`${host} down in Nova`, async () => (await bed.service(host)).state === 'down', 20_000);
  }

  /** The refusal lines logged for an incident. */
  const refusalLines = (incidentId: string) =>
    bed.logs
      .records()
      .filter(
        (line) =>
          line.incidentId === incidentId && String(line.msg).startsWith('fence refused on a blank memory'),
      );

  /** `lifeguard_fence_refused_total` of one worker, by reason. */
  async function refusedByReason(worker: FencingWorker): Promise<Record<string, number>> {
    const counted: Record<string, number> = {};
    for (const sample of (await worker.metrics.fenceRefused.get()).values)
      counted[String(sample.labels.reason)] = sample.value;
    return counted;
  }

  /** Waits until the fence job of `incidentId` was refused `times` times and sits in the delayed set. */
  async function refusedAndDelayed(host: string, incidentId: string, times: number) {
    const fencing = bed.queue(JOB_QUEUES.fencing);
    const jobId = fencingJobId(host, incidentId);
    await waitFor(
      `fence job of ${host} refused ${times} time(s) and delayed`,
      async () =>
        refusalLines(incidentId).length === times &&
        (await (await fencing.getJob(jobId))?.getState()) === 'delayed',
    );
    const job = await fencing.getJob(jobId);
    if (!job) throw new Error(`job ${jobId} disappeared`);
    return job;
  }

  /** Nothing was done to the host: powered on at its BMC, no fence agent run, Nova untouched, nothing published. */
  async function assertNotFenced(host: string, incidentId: string) {
    assert.equal(sim.powerState(host), 'On', 'the BMC still reports the host on');
    assert.equal(powerOffRuns, 0, 'fence_redfish was not run with action=off');
    assert.equal(bmcPowerOffs(host), 0, 'the BMC powered nothing off');
    const service = await bed.service(host);
    assert.deepEqual([service.forced_down, service.status], [false, 'enabled'], 'Nova not marked');
    const fenced = await bed.published('host.fenced');
    assert.ok(!fenced.some((event) => event.data.incidentId === incidentId), 'no host.fenced');
    assert.equal(
      await bed.queue(JOB_QUEUES.evacuation).getJob(evacuateHostJobId(host, incidentId)),
      undefined,
      'no evacuation job',
    );
  }

  /** The job, promoted, passes the gates, powers the host off once and hands it to evacuation. */
  async function assertFencedOnceAfterPromotion(host: string, incidentId: string) {
    const fencing = bed.queue(JOB_QUEUES.fencing);
    const jobId = fencingJobId(host, incidentId);
    await (await fencing.getJob(jobId))?.promote();
    const job = await bed.jobIn(fencing, jobId, 'completed', 60_000);
    assert.equal(job.attemptsMade, 1, 'the refusals spent no attempt');
    assert.equal(sim.powerState(host), 'Off', 'the BMC reports the host off');
    assert.equal(powerOffRuns, 1, 'fence_redfish was run with action=off once');
    assert.equal(bmcPowerOffs(host), 1, 'the BMC powered the host off once');
    assert.ok(
      bed.logs
        .records()
        .some(
          (line) =>
            line.incidentId === incidentId && /^fence re-check before fencing: pass/.test(String(line.msg)),
        ),
      'the fence went through the gates',
    );
    const incident = await bed.incidents.get(incidentId);
    assert.equal(incident?.fence?.proof, 'power-off-confirmed');
    const fenced = (await bed.published('host.fenced')).filter(
      (event) => event.data.incidentId === incidentId,
    );
    assert.equal(fenced.length, 1, 'host.fenced published once');
    assert.ok(await bed.queue(JOB_QUEUES.evacuation).getJob(evacuateHostJobId(host, incidentId)));
    const service = await bed.service(host);
    assert.equal(service.forced_down, true);
  }

  /**
   * The worker sees the deployment generation: a late fence job of an incident already closed reads
   * the marker (and remembers it) before it finds nothing to do.
   */
  async function workerSeesGeneration(host: string): Promise<void> {
    const service = await bed.service(host);
    const { incident } = await bed.incidents.openIncident({
      host,
      serviceId: service.id,
      fencingToken: await bed.issueToken(),
      kdumpFenced: false,
      resume: false,
      evidence: {
        serviceId: service.id,
        state: 'down',
        status: 'enabled',
        forcedDown: false,
        updatedAt: null,
        ageSeconds: null,
        disabledReason: null,
        zone: 'nova',
      },
    });
    await bed.incidents.close(incident.id, 'recovered');
    const fencing = bed.queue(JOB_QUEUES.fencing);
    const jobId = fencingJobId(host, incident.id);
    await fencing.add(JOB_NAMES.fence, fenceJobData(host, service.id, incident), { jobId });
    await bed.jobIn(fencing, jobId, 'completed');
    assert.ok(
      bed.logs
        .records()
        .some(
          (line) =>
            line.incidentId === incident.id && line.msg === 'incident is closed; fence job has nothing to do',
        ),
    );
  }

  /** Redis loses an incident: its record and the host's open-incident index (the fence job is left). */
  async function loseIncident(host: string, incidentId: string): Promise<void> {
    await bed.redis.del(
      redisKey(bed.keyPrefix, 'instance-ha', 'incident', incidentId),
      redisKey(bed.keyPrefix, 'instance-ha', 'open-by-host', host),
    );
    assert.equal(await bed.incidents.get(incidentId), null);
  }

  function fenceJobData(
    host: string,
    serviceId: string,
    incident: { id: string; fencingToken: number },
  ): FencingJobData {
    return {
      host,
      serviceId,
      incidentId: incident.id,
      fencingToken: incident.fencingToken,
      kdumpFenced: false,
      resume: false,
      detectedAt: new Date().toISOString(),
    };
  }

  it('the marker missing after the worker saw it: no power-off, deferred without an attempt, counted and logged at error; fenced once after the rebuild', async () => {
    const [victim, bystander] = ['compute1', 'compute4'];
    const monitor = new DeploymentGeneration(bed.redis, bed.keyPrefix);
    const first = await monitor.observe();
    assert.equal(first.marker.rebuild, 'none');
    const worker = await startWorker(victim);
    await workerSeesGeneration(bystander);
    await crash(victim);
    // Redis lost the marker; the node monitor has not noticed yet.
    await bed.redis.del(generationMarkerKey(bed.keyPrefix));
    const { incident } = await bed.hostDown(victim);

    const deferred = await refusedAndDelayed(victim, incident.id, 1);
    assert.equal(deferred.attemptsMade, 0, 'a refusal is not an attempt');
    const [refusal] = refusalLines(incident.id);
    assert.equal(refusal?.level, 50, 'logged at error');
    assert.equal(refusal?.reason, 'redis-memory-lost');
    assert.match(
      String(refusal?.detail),
      new RegExp(`no deployment generation marker although generation ${first.marker.id} was seen`),
    );
    assert.deepEqual(await refusedByReason(worker), { 'redis-memory-lost': 1 });
    await assertNotFenced(victim, incident.id);
    assert.deepEqual(
      [(await bed.incidents.get(incident.id))?.state, (await bed.incidents.get(incident.id))?.fence],
      ['open', null],
    );

    // The node monitor notices: a new marker, its rebuild pending. Still no fence.
    const noticed = await monitor.observe();
    assert.deepEqual(
      [noticed.verdict.kind, noticed.marker.rebuild, noticed.marker.lostGenerationId],
      ['memory-lost', 'pending', first.marker.id],
    );
    await deferred.promote();
    const again = await refusedAndDelayed(victim, incident.id, 2);
    assert.equal(again.attemptsMade, 0);
    assert.deepEqual(await refusedByReason(worker), { 'redis-memory-lost': 2 });
    await assertNotFenced(victim, incident.id);

    // The rebuild finishes: the job goes through the gates and fences once.
    assert.equal(await monitor.markRebuilt(noticed.marker), true);
    await assertFencedOnceAfterPromotion(victim, incident.id);
    assert.deepEqual(await refusedByReason(worker), { 'redis-memory-lost': 2 });
  });

  it('the rebuild pending: a worker that never saw a generation defers the fence too; fenced once when it is done', async () => {
    const victim = 'compute2';
    const monitor = new DeploymentGeneration(bed.redis, bed.keyPrefix);
    const lost = await monitor.observe();
    await bed.redis.del(generationMarkerKey(bed.keyPrefix));
    const pending = await monitor.observe();
    assert.deepEqual([pending.marker.rebuild, pending.marker.lostGenerationId], ['pending', lost.marker.id]);
    const worker = await startWorker(victim);
    await crash(victim);
    const { incident } = await bed.hostDown(victim);

    const deferred = await refusedAndDelayed(victim, incident.id, 1);
    assert.equal(deferred.attemptsMade, 0, 'a refusal is not an attempt');
    const [refusal] = refusalLines(incident.id);
    assert.equal(refusal?.level, 50);
    assert.equal(refusal?.reason, 'redis-memory-lost');
    assert.match(
      String(refusal?.detail),
      new RegExp(
        `lost the memory of generation ${lost.marker.id} and the rebuild from Nova has not finished`,
      ),
    );
    assert.deepEqual(await refusedByReason(worker), { 'redis-memory-lost': 1 });
    await assertNotFenced(victim, incident.id);

    assert.equal(await monitor.markRebuilt(pending.marker), true);
    await assertFencedOnceAfterPromotion(victim, incident.id);
    assert.deepEqual(await refusedByReason(worker), { 'redis-memory-lost': 1 });
  });

  it('the memory lost during the kdump wait: the check just before the power-off refuses; fenced once after the rebuild', async () => {
    const victim = 'compute3';
    const monitor = new DeploymentGeneration(bed.redis, bed.keyPrefix);
    const first = await monitor.observe();
    const worker = await startWorker(victim, '  POLL: "60"\n  CHECK_KDUMP: "true"\n  KDUMP_TIMEOUT: "4"');
    await crash(victim);
    const { incident } = await bed.hostDown(victim);
    await waitFor('the kdump wait to start', () =>
      bed.logs
        .records()
        .some((line) => line.incidentId === incident.id && line.msg === 'waiting for fence_kdump packets'),
    );
    // The first check passed (the worker remembers the marker); Redis loses it during the wait.
    await bed.redis.del(generationMarkerKey(bed.keyPrefix));

    const deferred = await refusedAndDelayed(victim, incident.id, 1);
    assert.equal(deferred.attemptsMade, 0);
    const [refusal] = refusalLines(incident.id);
    assert.equal(refusal?.level, 50);
    assert.match(
      String(refusal?.detail),
      new RegExp(`no deployment generation marker although generation ${first.marker.id} was seen`),
    );
    assert.ok(
      bed.logs
        .records()
        .some(
          (line) =>
            line.incidentId === incident.id &&
            /^fence re-check after the kdump wait: pass/.test(String(line.msg)),
        ),
      'the refusal came after the kdump wait',
    );
    assert.deepEqual(await refusedByReason(worker), { 'redis-memory-lost': 1 });
    await assertNotFenced(victim, incident.id);
    assert.equal((await bed.incidents.get(incident.id))?.fence, null);

    const noticed = await monitor.observe();
    assert.equal(noticed.marker.rebuild, 'pending');
    assert.equal(await monitor.markRebuilt(noticed.marker), true);
    await assertFencedOnceAfterPromotion(victim, incident.id);
  });

  it('the incident not in Redis: the fence job ends without fencing, counted and logged at error', async () => {
    const victim = 'compute1';
    const monitor = new DeploymentGeneration(bed.redis, bed.keyPrefix);
    await monitor.observe();
    const worker = await startWorker(victim);
    await crash(victim);
    const service = await bed.service(victim);
    const { incident } = await bed.incidents.openIncident({
      host: victim,
      serviceId: service.id,
      fencingToken: await bed.issueToken(),
      kdumpFenced: false,
      resume: false,
      evidence: {
        serviceId: service.id,
        state: 'down',
        status: 'enabled',
        forcedDown: false,
        updatedAt: null,
        ageSeconds: null,
        disabledReason: null,
        zone: 'nova',
      },
    });
    await loseIncident(victim, incident.id);
    const fencing = bed.queue(JOB_QUEUES.fencing);
    const jobId = fencingJobId(victim, incident.id);
    await fencing.add(JOB_NAMES.fence, fenceJobData(victim, service.id, incident), {
      jobId,
      attempts: 3,
    });

    const job = await bed.jobIn(fencing, jobId, 'completed');
    assert.equal(job.returnvalue, null, 'the job ended with nothing done');
    assert.equal(job.attemptsMade, 1, 'ended on its first attempt, not retried');
    const [refusal] = refusalLines(incident.id);
    assert.equal(refusal?.level, 50);
    assert.equal(refusal?.reason, 'no-incident');
    assert.equal(refusal?.detail, `incident ${incident.id} is not in Redis`);
    assert.equal(refusalLines(incident.id).length, 1);
    assert.deepEqual(await refusedByReason(worker), { 'no-incident': 1 });
    await assertNotFenced(victim, incident.id);
    assert.equal(await bed.incidents.get(incident.id), null, 'no incident written back');
  });

  it('the incident lost during the kdump wait: the check just before the power-off ends the job without fencing', async () => {
    const victim = 'compute2';
    const monitor = new DeploymentGeneration(bed.redis, bed.keyPrefix);
    await monitor.observe();
    const worker = await startWorker(victim, '  POLL: "60"\n  CHECK_KDUMP: "true"\n  KDUMP_TIMEOUT: "4"');
    await crash(victim);
    const { incident } = await bed.hostDown(victim);
    await waitFor('the kdump wait to start', () =>
      bed.logs
        .records()
        .some((line) => line.incidentId === incident.id && line.msg === 'waiting for fence_kdump packets'),
    );
    await loseIncident(victim, incident.id);

    const fencing = bed.queue(JOB_QUEUES.fencing);
    const job = await bed.jobIn(fencing, fencingJobId(victim, incident.id), 'completed');
    assert.equal(job.returnvalue, null, 'the job ended with nothing done');
    const refusals = refusalLines(incident.id);
    assert.equal(refusals.length, 1);
    assert.equal(refusals[0]?.level, 50);
    assert.equal(refusals[0]?.reason, 'no-incident');
    assert.equal(refusals[0]?.detail, `incident ${incident.id} is no longer in Redis`);
    assert.deepEqual(await refusedByReason(worker), { 'no-incident': 1 });
    await assertNotFenced(victim, incident.id);
    assert.equal(await bed.incidents.get(incident.id), null, 'no incident written back');
  });
});
