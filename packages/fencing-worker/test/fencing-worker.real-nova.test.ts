import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import {
  EVENTS_EXCHANGE,
  evacuateHostJobId,
  fencingJobId,
  JOB_NAMES,
  JOB_QUEUES,
  powerOnJobId,
} from '@lifeguard/contracts';
import { parseDisabledReason } from '@lifeguard/instance-ha';
import { takeDeadLetterReasons, waitFor } from '@lifeguard/testing';
import type { Queue } from 'bullmq';
import { type IpmiSimulator, startIpmiSimulator } from './support/ipmi-simulator.ts';
import { realNovaEnvironment, WorkerTestBed } from './support/worker-test-bed.ts';

/** A native `ipmi` fencing.yaml entry for a simulator (cipher 3 spares ipmitool its probe). */
const ipmi = (sim: IpmiSimulator, password = sim.password) =>
  `{ agent: ipmi, ipaddr: 127.0.0.1, ipport: ${sim.port}, login: ${sim.login}, passwd: "${password}", cipher: 3, timeout: 5 }`;
const fenceIpmilan = (sim: IpmiSimulator) =>
  `{ agent: fence_ipmilan, ipaddr: 127.0.0.1, ipport: ${sim.port}, login: ${sim.login}, passwd: "${sim.password}", options: { lanplus: 1, cipher: 3 } }`;

describe('fencing worker: host.down → fence → Nova → evacuation hand-off (real RabbitMQ, Redis, ipmi_sim, Nova)', () => {
  let bed: WorkerTestBed;
  let hosts: string[];
  const simulators: IpmiSimulator[] = [];
  let fencingQueue: Queue;
  let evacuationQueue: Queue;

  before(async () => {
    hosts = realNovaEnvironment().hosts.slice(0, 3);
    assert.equal(hosts.length, 3, 'the harness runs three computes');
    bed = await WorkerTestBed.create('fencing-worker');
    for (let index = 0; index < 3; index++) simulators.push(await startIpmiSimulator());
    fencingQueue = bed.queue(JOB_QUEUES.fencing);
    evacuationQueue = bed.queue(JOB_QUEUES.evacuation);
    // Start from a harness whose computes all report: a compute an earlier file left starting would
    // count against THRESHOLD in the first fence's re-check.
    await bed.restoreComputes(hosts);
  });

  afterEach(async () => {
    await bed.stopWorkers();
    await bed.closeOpenIncidents();
    await bed.restoreComputes(hosts);
  });

  after(async () => {
    const stored = await bed.storedText();
    const published = JSON.stringify(await bed.published());
    await bed.close();
    await Promise.all(simulators.map((sim) => sim.stop()));
    for (const sim of simulators) {
      assert.ok(!bed.logs.text.includes(sim.password), 'a BMC password appeared in a log line');
      assert.ok(
        !stored.includes(sim.password),
        'a BMC password is stored in Redis (job data, results, incidents)',
      );
      assert.ok(!published.includes(sim.password), 'a BMC password appeared in an event');
    }
  });

  it('duplicate host.down events give one fence, one evacuation hand-off, and Nova shows forced_down + disabled with the marker', async () => {
    const [host] = hosts as [string];
    const [sim] = simulators as [IpmiSimulator];
    await bed.startWorker({ fencingYaml: `FencingConfig:\n  ${host}.example.com: ${ipmi(sim)}\n` });
    await bed.hangCompute(host);
    const { incident, event } = await bed.hostDown(host);
    await bed.events.publishEvent(event);
    await bed.events.publishEvent({ ...event, id: crypto.randomUUID() });

    const jobId = fencingJobId(host, incident.id);
    const result = (await bed.jobIn(fencingQueue, jobId, 'completed')).returnvalue;
    assert.deepEqual(result, {
      host,
      incidentId: incident.id,
      proof: 'power-off-confirmed',
      method: 'ipmi',
      evacuationJobId: evacuateHostJobId(host, incident.id),
    });
    assert.equal(sim.power(), 'off');
    assert.deepEqual(sim.powerCommands(), ['0'], 'exactly one power-off');

    const evacuations = await evacuationQueue.getJobs([
      'waiting',
      'delayed',
      'active',
      'completed',
      'failed',
    ]);
    assert.equal(evacuations.length, 1);
    const [handOff] = evacuations;
    assert.equal(handOff?.id, evacuateHostJobId(host, incident.id));
    assert.equal(handOff?.name, JOB_NAMES.evacuateHost);
    assert.deepEqual(handOff?.data, {
      host,
      serviceId: incident.serviceId,
      incidentId: incident.id,
      kdumpFenced: false,
      resume: false,
      fencedAt: (await bed.incidents.get(incident.id))?.fence?.at,
    });

    const stored = await bed.incidents.get(incident.id);
    assert.equal(stored?.state, 'fenced');
    assert.equal(stored?.fence?.proof, 'power-off-confirmed');
    assert.equal(stored?.fence?.method, 'ipmi');

    const service = await bed.service(host);
    assert.equal(service.forced_down, true);
    assert.equal(service.status, 'disabled');
    const marker = parseDisabledReason(service.disabled_reason);
    assert.deepEqual(
      { kind: marker.kind, origin: marker.origin, kdump: marker.kdump, incidentId: marker.incidentId },
      { kind: 'evacuating', origin: 'lifeguard', kdump: false, incidentId: incident.id },
    );
    assert.match(service.disabled_reason ?? '', /^lifeguard evacuation: \d{4}-\d\d-\d\dT[\d:.]+Z incident=/);

    const fenced = await bed.published('host.fenced');
    assert.equal(fenced.length, 1, 'host.fenced is published once per incident');
    assert.deepEqual(
      { host: fenced[0]?.data.host, proof: fenced[0]?.data.proof, method: fenced[0]?.data.method },
      { host, proof: 'power-off-confirmed', method: 'ipmi' },
    );
    const duplicates = bed.logs
      .records()
      .filter((line) => line.msg === 'duplicate host.down: the fence job already exists');
    assert.equal(duplicates.length, 2);

    // The evacuation worker asks for the power-on once it is done.
    await fencingQueue.add(
      JOB_NAMES.powerOn,
      { host, incidentId: incident.id },
      { jobId: powerOnJobId(host, incident.id) },
    );
    await waitFor('the host to be powered on', () => sim.power() === 'on');
    await waitFor('host.powered-on', async () => (await bed.published('host.powered-on')).length === 1);
    const [poweredOn] = await bed.published('host.powered-on');
    assert.deepEqual(poweredOn?.data, { host, incidentId: incident.id, method: 'ipmi' });
    await bed.incidents.close(incident.id, 'test done');
  });

  it('on real Nova: a failed fence retried after the host reports again closes the incident as recovered; no power command, Nova untouched', async () => {
    const [host] = hosts as [string];
    const [sim] = simulators as [IpmiSimulator];
    sim.setPower('on');
    const before = sim.powerCommands().length;
    // The BMC does not answer (nothing listens on port 9): the only attempt fails, recoverably.
    await bed.startWorker({
      fencingYaml: `FencingConfig:\n  ${host}: { agent: ipmi, ipaddr: 127.0.0.1, ipport: 9, login: admin, passwd: "x", cipher: 3, timeout: 2 }\n`,
      settings: {
        LIFEGUARD_FENCING_ATTEMPTS: '1',
        LIFEGUARD_FENCING_RECONCILE_SECONDS: '0.5',
        LIFEGUARD_FENCING_RETRY_FAILED_AFTER_SECONDS: '3',
      },
    });
    await bed.hangCompute(host);
    const { incident } = await bed.hostDown(host);
    await waitFor(
      'host.fencing.failed',
      async () =>
        (await bed.published('host.fencing.failed')).some((event) => event.data.incidentId === incident.id),
      90_000,
    );
    // The host heals: its nova-compute reports again and Nova shows it up.
    await bed.startComputes([host]);
    await waitFor('the host up in Nova', async () => (await bed.service(host)).state === 'up', 60_000, 500);
    const recovered = await waitFor(
      'host.recovered',
      async () =>
        (await bed.published('host.recovered')).find((event) => event.data.incidentId === incident.id),
      30_000,
    );
    assert.match(
      recovered.data.reason,
      new RegExp(`^${host} reports to Nova: state up, updated_at \\d+ s ago`),
    );
    const stored = await bed.incidents.get(incident.id);
    assert.deepEqual([stored?.state, stored?.outcome, stored?.fence], ['closed', 'recovered', null]);
    const service = await bed.service(host);
    assert.deepEqual([service.forced_down, service.status, service.state], [false, 'enabled', 'up']);
    assert.equal(await evacuationQueue.getJob(evacuateHostJobId(host, incident.id)), undefined);
    assert.equal(sim.powerCommands().length, before, 'no power command reached the host');
    assert.ok(!(await bed.published('host.fenced')).some((event) => event.data.incidentId === incident.id));
  });

  it('drops a host.down whose fencing token is older than the newest seen; noop fencing marks the host in Nova too', async () => {
    const [, host] = hosts as [string, string];
    await bed.startWorker({
      fencingYaml: `FencingConfig:\n  ${host}: { agent: noop }\n`,
      settings: { LIFEGUARD_FENCING_ALLOW_NOOP: 'true' },
    });
    await bed.hangCompute(host);
    const fresh = await bed.hostDown(host, { fencingToken: 1000 });
    const result = (await bed.jobIn(fencingQueue, fencingJobId(host, fresh.incident.id), 'completed'))
      .returnvalue;
    assert.deepEqual(
      [result.method, result.proof],
      ['noop', 'noop'],
      'noop never claims a confirmed power-off',
    );
    const service = await bed.service(host);
    assert.equal(service.forced_down, true);
    assert.equal(service.status, 'disabled');
    assert.equal(parseDisabledReason(service.disabled_reason).incidentId, fresh.incident.id);
    assert.ok(
      bed.logs.records().some((line) => String(line.msg).startsWith('noop fencing: nothing was powered off')),
    );
    await bed.incidents.close(fresh.incident.id, 'test');
    const stale = await bed.hostDown(host, { fencingToken: 999 });
    const line = await waitFor('the stale-event log line', () =>
      bed.logs
        .records()
        .find(
          (record) =>
            record.incidentId === stale.incident.id &&
            String(record.msg).startsWith('host.down from a stale node monitor dropped'),
        ),
    );
    assert.equal(line.highestFencingToken, 1000);
    assert.equal(await fencingQueue.getJob(fencingJobId(host, stale.incident.id)), undefined);
    await bed.incidents.close(stale.incident.id, 'test');
  });

  it('a wrong password is unrecoverable: host.fencing.failed, no Nova change, no evacuation; an operator confirmation then lets it through', async () => {
    const [, host] = hosts as [string, string];
    const sim = simulators[1]!;
    await bed.startWorker({
      fencingYaml: `FencingConfig:\n  ${host}: ${ipmi(sim, 'wrong-password')}\n`,
      settings: { LIFEGUARD_FENCING_ATTEMPTS: '5', LIFEGUARD_FENCING_RECONCILE_SECONDS: '0.5' },
    });
    await bed.hangCompute(host);
    const { incident } = await bed.hostDown(host, { fencingToken: 2000 });
    const jobId = fencingJobId(host, incident.id);
    const job = await bed.jobIn(fencingQueue, jobId, 'failed');
    assert.equal(job.attemptsMade, 1, 'not retried');
    assert.match(job.failedReason ?? '', /^not recoverable \(credentials\)/);
    assert.ok(!(job.failedReason ?? '').includes('wrong-password'));

    const [failure] = await waitFor('host.fencing.failed', async () => {
      const events = (await bed.published('host.fencing.failed')).filter(
        (event) => event.data.incidentId === incident.id,
      );
      return events.length > 0 ? events : undefined;
    });
    assert.equal(failure?.data.recoverable, false);
    assert.equal(failure?.data.host, host);
    assert.match(failure?.data.reason ?? '', /rejected the credentials/);
    assert.ok(
      bed.logs
        .records()
        .some((line) => line.alert === true && line.level === 50 && line.incidentId === incident.id),
      'an alert-level log line',
    );
    const service = await bed.service(host);
    assert.equal(service.forced_down, false, 'not forced down');
    assert.equal(service.status, 'enabled', 'not disabled');
    assert.equal(
      await evacuationQueue.getJob(evacuateHostJobId(host, incident.id)),
      undefined,
      'not evacuated',
    );
    assert.equal((await bed.incidents.get(incident.id))?.state, 'failed');
    assert.equal(sim.power(), 'on');

    // A duplicate event does not retry an unrecoverable failure...
    await bed.hostDown(host, { fencingToken: 2001 });
    await waitFor('the duplicate to be seen', () =>
      bed.logs.records().some((line) => line.incidentId === incident.id && line.state === 'failed'),
    );
    assert.equal(await job.getState(), 'failed');
    // ...but once an operator confirmed the host is off, the worker notices and lets it through.
    await bed.incidents.confirmFencedByOperator(host, 'alice', 'BMC lost power with the host');
    const result = (await bed.jobIn(fencingQueue, jobId, 'completed')).returnvalue;
    assert.equal(result.proof, 'operator-confirmed');
    assert.equal(result.method, 'operator');
    assert.deepEqual(sim.powerCommands(), [], 'nothing was powered off');
    assert.equal((await bed.service(host)).forced_down, true);
    assert.ok(await evacuationQueue.getJob(evacuateHostJobId(host, incident.id)));
    await bed.incidents.close(incident.id, 'test done');
  });

  it('two workers on one queue and duplicate events: each incident fenced once and handed off once', async () => {
    const yaml = `FencingConfig:\n${hosts.map((host, index) => `  ${host}: ${index === 2 ? fenceIpmilan(simulators[index]!) : ipmi(simulators[index]!)}`).join('\n')}\n`;
    for (const sim of simulators) sim.setPower('on');
    const before = simulators.map((sim) => sim.powerCommands().length);
    // All three harness hosts fail: THRESHOLD 100 lets the re-check of each fence through.
    await Promise.all(hosts.map((host) => bed.hangCompute(host)));
    const configYaml = '  FENCING_TIMEOUT: "10"\n  THRESHOLD: "100"';
    await bed.startWorker({ fencingYaml: yaml, configYaml });
    await bed.startWorker({ fencingYaml: yaml, configYaml });
    const incidents = [];
    for (const host of hosts) {
      const { incident, event } = await bed.hostDown(host, { fencingToken: 3000 });
      for (let copy = 0; copy < 3; copy++)
        await bed.events.publishEvent({ ...event, id: crypto.randomUUID() });
      incidents.push(incident);
    }
    for (const incident of incidents) {
      await waitFor(
        `the fence job of ${incident.host} to complete`,
        async () =>
          (await (await fencingQueue.getJob(fencingJobId(incident.host, incident.id)))?.getState()) ===
          'completed',
        60_000,
      );
    }
    simulators.forEach((sim, index) => {
      assert.deepEqual(sim.powerCommands().slice(before[index]), ['0'], `one power-off for ${hosts[index]}`);
      assert.equal(sim.power(), 'off');
    });
    for (const incident of incidents) {
      const handOffs = (
        await evacuationQueue.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed'])
      ).filter((job) => job.data.incidentId === incident.id);
      assert.equal(handOffs.length, 1, `one hand-off for ${incident.host}`);
      const fenced = (await bed.published('host.fenced')).filter(
        (event) => event.data.incidentId === incident.id,
      );
      assert.equal(fenced.length, 1);
      await bed.incidents.close(incident.id, 'test done');
    }
    const ids = new Set(incidents.map((incident) => incident.id));
    const intakes = new Set(
      bed.logs
        .records()
        .filter((line) => line.component === 'intake' && ids.has(String(line.incidentId)))
        .map((line) => line.worker),
    );
    assert.deepEqual(
      [...intakes].sort(),
      ['worker-1', 'worker-2'],
      'both intakes took events (competing consumers)',
    );
  });

  it('dead-letters a malformed host.down and one naming an unknown incident, with the reason, and keeps consuming', async () => {
    const [host] = hosts as [string];
    await bed.startWorker({ fencingYaml: 'FencingConfig: {}\n' });
    await bed.amqp.publish(
      EVENTS_EXCHANGE,
      'host.down',
      Buffer.from('{"type":"host.down","data":{"host":42}}'),
    );
    await bed.hangCompute(host);
    const { event } = await bed.hostDown(host, { fencingToken: 3500 });
    const ghost = {
      ...event,
      id: crypto.randomUUID(),
      data: { ...event.data, incidentId: 'ghost.20260101T000000Z.0000' },
    };
    await bed.events.publishEvent(ghost);
    const all: string[] = [];
    await waitFor('two dead letters', async () => {
      all.push(...(await takeDeadLetterReasons(bed.amqp)));
      return all.length >= 2;
    });
    assert.equal(all.length, 2, all.join(' | '));
    assert.ok(
      all.some((reason) => /^host\.down event: /.test(reason)),
      all.join(' | '),
    );
    assert.ok(
      all.some((reason) => reason.includes('incident ghost.20260101T000000Z.0000')),
      all.join(' | '),
    );
    // The real event behind them was still taken in (and failed: no fencing.yaml entry).
    const failed = await waitFor('host.fencing.failed for the unknown host', async () =>
      (await bed.published('host.fencing.failed')).find(
        (each) => each.data.incidentId === event.data.incidentId,
      ),
    );
    assert.match(failed.data.reason, /has no entry in fencing\.yaml/);
    assert.equal(failed.data.recoverable, false);
    await bed.incidents.close(event.data.incidentId, 'test done');
  });

  it('with CHECK_KDUMP, a host in its crash kernel is kdump-fenced without power fencing; no packet means power fencing after KDUMP_TIMEOUT', async () => {
    const [host, second, third] = hosts as [string, string, string];
    for (const sim of simulators) sim.setPower('on');
    const counts = simulators.map((sim) => sim.powerCommands().length);
    await bed.startWorker({
      fencingYaml: `FencingConfig:\n${hosts.map((name, index) => `  ${name}: ${ipmi(simulators[index]!)}`).join('\n')}\n`,
      configYaml: '  CHECK_KDUMP: "true"\n  KDUMP_TIMEOUT: "5"\n  FENCING_TIMEOUT: "10"\n  THRESHOLD: "100"',
    });
    await Promise.all(hosts.map((each) => bed.hangCompute(each)));
    // The monitor saw kdump packets: kdump-fenced at once.
    const seen = await bed.hostDown(host, { fencingToken: 4000, kdumpFenced: true });
    // A packet arrives while the job waits.
    const during = await bed.hostDown(second, { fencingToken: 4000 });
    await waitFor('the kdump wait of the second host', () =>
      bed.logs
        .records()
        .some(
          (line) => line.incidentId === during.incident.id && line.msg === 'waiting for fence_kdump packets',
        ),
    );
    await bed.kdump.recordPacket(second);
    // No packet at all: power fencing once KDUMP_TIMEOUT passed.
    const silent = await bed.hostDown(third, { fencingToken: 4000 });
    const results = [];
    for (const { incident } of [seen, during, silent]) {
      results.push(
        (await bed.jobIn(fencingQueue, fencingJobId(incident.host, incident.id), 'completed')).returnvalue,
      );
    }
    assert.deepEqual(
      results.map((result) => [result.proof, result.method]),
      [
        ['kdump', 'kdump'],
        ['kdump', 'kdump'],
        ['power-off-confirmed', 'ipmi'],
      ],
    );
    assert.equal(simulators[0]!.powerCommands().length, counts[0], 'kdump-fenced: no power command');
    assert.equal(simulators[1]!.powerCommands().length, counts[1], 'kdump-fenced: no power command');
    assert.deepEqual(simulators[2]!.powerCommands().slice(counts[2]), ['0']);
    const marker = parseDisabledReason((await bed.service(host)).disabled_reason);
    assert.equal(marker.kdump, true, 'the (kdump) marker');
    const handOff = await evacuationQueue.getJob(evacuateHostJobId(host, seen.incident.id));
    assert.equal(handOff?.data.kdumpFenced, true);

    // A kdump-fenced host is not powered on after its evacuation.
    await fencingQueue.add(
      JOB_NAMES.powerOn,
      { host, incidentId: seen.incident.id },
      { jobId: powerOnJobId(host, seen.incident.id) },
    );
    const powerOn = (await bed.jobIn(fencingQueue, powerOnJobId(host, seen.incident.id), 'completed'))
      .returnvalue;
    assert.equal(powerOn.poweredOn, false);
    assert.equal(powerOn.skipped, 'kdump-fenced');
    for (const { incident } of [seen, during, silent]) await bed.incidents.close(incident.id, 'test done');
  });
});
