import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { evacuateHostJobId, fencingJobId, JOB_QUEUES } from '@lifeguard/contracts';
import { parseDisabledReason } from '@lifeguard/instance-ha';
import type { Queue } from 'bullmq';
import { type IpmiSimulator, startIpmiSimulator } from './support/ipmi-simulator.ts';
import { WorkerProcess } from './support/worker-process.ts';
import { realNovaClientEnvironment, realNovaEnvironment, WorkerTestBed } from './support/worker-test-bed.ts';

describe('the fencing worker process (its main): SIGKILL mid-job, takeover, graceful stop, /metrics', () => {
  let bed: WorkerTestBed;
  let hosts: string[];
  const simulators: IpmiSimulator[] = [];
  const processes: WorkerProcess[] = [];
  let fencingQueue: Queue;
  let evacuationQueue: Queue;

  /** Environment of a worker process on the bed's vhost, prefix and Nova. */
  const environment = (configYaml: string): Record<string, string> => ({
    LIFEGUARD_AMQP_URL: bed.vhost.url,
    LIFEGUARD_REDIS_KEY_PREFIX: bed.keyPrefix,
    LIFEGUARD_SHUTDOWN_TIMEOUT_SECONDS: '10',
    FENCING_CONFIG_PATH: bed.file(
      'fencing.yaml',
      `FencingConfig:\n${hosts
        .map(
          (host, index) =>
            `  ${host}: { agent: ipmi, ipaddr: 127.0.0.1, ipport: ${simulators[index]!.port}, login: ${simulators[index]!.login}, passwd: "${simulators[index]!.password}", cipher: 3, timeout: 5 }`,
        )
        .join('\n')}\n`,
    ),
    INSTANCEHA_CONFIG_PATH: bed.file(`config-${processes.length}.yaml`, `config:\n${configYaml}\n`),
    LIFEGUARD_FENCING_ALLOW_LOOPBACK: 'true',
    LIFEGUARD_JOB_LOCK_SECONDS: '3',
    LIFEGUARD_JOB_STALLED_CHECK_SECONDS: '1',
    LIFEGUARD_FENCING_BACKOFF_SECONDS: '0.2',
    ...realNovaClientEnvironment(),
  });

  const start = async (name: string, configYaml = '  FENCING_TIMEOUT: "10"') => {
    const worker = WorkerProcess.start(name, environment(configYaml));
    processes.push(worker);
    await worker.waitForRecord('start-up', (record) => record.msg === 'fencing-worker started');
    return worker;
  };

  const completed = (host: string, incidentId: string) =>
    bed.jobIn(fencingQueue, fencingJobId(host, incidentId), 'completed', 60_000);

  before(async () => {
    hosts = realNovaEnvironment().hosts.slice(0, 3);
    bed = await WorkerTestBed.create('fencing-process');
    for (let index = 0; index < 3; index++) simulators.push(await startIpmiSimulator());
    fencingQueue = bed.queue(JOB_QUEUES.fencing);
    evacuationQueue = bed.queue(JOB_QUEUES.evacuation);
  });

  afterEach(async () => {
    await Promise.all(processes.map((worker) => worker.kill()));
    await bed.closeOpenIncidents();
    await bed.restoreComputes(hosts);
  });

  after(async () => {
    const stored = await bed.storedText();
    await bed.close();
    await Promise.all(simulators.map((sim) => sim.stop()));
    for (const sim of simulators) {
      for (const worker of processes)
        assert.ok(!worker.text.includes(sim.password), `${worker.name} logged a password`);
      assert.ok(!stored.includes(sim.password), 'a password is stored in Redis');
    }
  });

  it('a worker SIGKILLed while waiting for kdump: another takes the job over, fences once, hands off once', async () => {
    const [host] = hosts as [string];
    const sim = simulators[0]!;
    const config = '  CHECK_KDUMP: "true"\n  KDUMP_TIMEOUT: "6"\n  FENCING_TIMEOUT: "10"';
    const first = await start('worker-a', config);
    await bed.hangCompute(host);
    const { incident } = await bed.hostDown(host);
    await first.waitForRecord('the kdump wait', (record) => record.msg === 'waiting for fence_kdump packets');
    await first.kill();
    assert.equal(sim.power(), 'on', 'killed before any power command');

    const second = await start('worker-b', config);
    const job = await completed(host, incident.id);
    assert.equal(job.returnvalue.proof, 'power-off-confirmed');
    assert.deepEqual(sim.powerCommands(), ['0'], 'one power-off');
    assert.ok(
      second
        .records()
        .some((record) => record.msg === 'job taken over from a worker that stopped answering') ||
        second
          .records()
          .some((record) => record.incidentId === incident.id && record.msg === 'power off confirmed'),
      'the second worker ran the job',
    );
    const handOffs = (await evacuationQueue.getJobs(['waiting', 'delayed', 'active', 'completed'])).filter(
      (each) => each.data.incidentId === incident.id,
    );
    assert.deepEqual(
      handOffs.map((each) => each.id),
      [evacuateHostJobId(host, incident.id)],
    );
    await bed.incidents.close(incident.id, 'test done');
  });

  it('a worker SIGKILLed right after the power-off was confirmed: the fence is never lost, never doubled into harm, and the hand-off happens once', async () => {
    const [, host] = hosts as [string, string];
    const sim = simulators[1]!;
    const first = await start('worker-c');
    await bed.hangCompute(host);
    const { incident } = await bed.hostDown(host);
    await first.waitForRecord(
      'the confirmed power-off',
      (record) => record.incidentId === incident.id && record.msg === 'power off confirmed',
    );
    await first.kill();
    assert.equal(sim.power(), 'off');

    await start('worker-d');
    const job = await completed(host, incident.id);
    assert.equal(job.returnvalue.proof, 'power-off-confirmed');
    const commands = sim.powerCommands();
    assert.ok(
      commands.length >= 1 && commands.length <= 2,
      `one or two power-offs, got ${commands.join(',')}`,
    );
    assert.ok(
      commands.every((command) => command === '0'),
      'only power-offs, never a power-on',
    );
    const stored = await bed.incidents.get(incident.id);
    assert.equal(stored?.fence?.proof, 'power-off-confirmed');
    const service = await bed.service(host);
    assert.equal(service.forced_down, true);
    assert.equal(parseDisabledReason(service.disabled_reason).incidentId, incident.id);
    const handOffs = (await evacuationQueue.getJobs(['waiting', 'delayed', 'active', 'completed'])).filter(
      (each) => each.data.incidentId === incident.id,
    );
    assert.equal(handOffs.length, 1);
    await bed.incidents.close(incident.id, 'test done');
  });

  it('serves lifeguard and BullMQ metrics, and stops gracefully on SIGTERM', async () => {
    const [, , host] = hosts as [string, string, string];
    const worker = await start('worker-e');
    await bed.hangCompute(host);
    const { incident } = await bed.hostDown(host);
    await completed(host, incident.id);
    const starting = await worker.waitForRecord(
      'the HTTP port',
      (record) => record.msg === 'fencing-worker starting',
    );
    const metrics = await (await fetch(`http://127.0.0.1:${starting.http}/metrics`)).text();
    const ours = metrics
      .split('\n')
      .filter((line) => /^(lifeguard_fencing|bullmq_job_count)/.test(line))
      .join('\n');
    assert.match(ours, /^lifeguard_fencing_total\{(?=[^}]*result="succeeded")[^}]*\} 1$/m);
    assert.match(ours, /^lifeguard_fencing_duration_seconds_count\{(?=[^}]*result="succeeded")[^}]*\} 1$/m);
    // Three tests in this file each completed one fence job and handed one host off.
    assert.match(ours, /^bullmq_job_count\{(?=[^}]*queue="fencing")(?=[^}]*state="completed")[^}]*\} 3$/m);
    assert.match(ours, /^bullmq_job_count\{(?=[^}]*queue="evacuation")(?=[^}]*state="waiting")[^}]*\} 3$/m);
    assert.equal(metrics.match(/^# TYPE bullmq_job_count /gm)?.length, 1, 'one TYPE line per metric name');
    const ready = await fetch(`http://127.0.0.1:${starting.http}/readyz`);
    assert.equal(ready.status, 200);

    worker.signal('SIGTERM');
    const exit = await worker.exited;
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.ok(worker.records().some((record) => record.msg === 'shutdown complete'));
    await bed.incidents.close(incident.id, 'test done');
  });
});
