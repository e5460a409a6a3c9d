import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { EventJournal } from '@lifeguard/runtime';
import { createTestVhost, type TestVhost, waitFor } from '@lifeguard/testing';
import { EvacuationBed } from './support/evacuation-bed.ts';
import { WorkerProcess } from './support/worker-process.ts';

const processes: WorkerProcess[] = [];
const beds: EvacuationBed[] = [];
const vhosts: TestVhost[] = [];
after(async () => {
  await Promise.all(processes.map((each) => each.stop()));
  for (const bed of beds) await bed.close();
  for (const vhost of vhosts) await vhost.delete();
});

async function start(
  bed: EvacuationBed,
  vhost: TestVhost,
  name: string,
  instanceHa: Record<string, string>,
  environment: Record<string, string> = {},
) {
  const worker = await WorkerProcess.start(bed, { name, amqpUrl: vhost.url, instanceHa, environment });
  processes.push(worker);
  return worker;
}

describe('evacuation worker processes', () => {
  it('resumes a host after its worker process is SIGKILLed mid-host without evacuating finished instances again', async () => {
    const vhost = await createTestVhost('evacuation-resume');
    vhosts.push(vhost);
    const bed = await EvacuationBed.start({
      inProcessWorker: false,
      cloud: { model: { evacuation: { acceptMilliseconds: 0, rebuildMilliseconds: 1200 } } },
    });
    beds.push(bed);
    const instanceHa = { SMART_EVACUATION: 'true', EVACUATION_MAX_THREADS: '2', WORKERS: '1' };
    const servers = Array.from({ length: 8 }, (_, index) =>
      bed.sim.addServer({ host: 'compute1', name: `vm-${index}` }),
    );
    const first = await start(bed, vhost, 'worker-a', instanceHa);
    const { jobId } = await bed.failHost('compute1');
    // Two instances evacuated, two more being rebuilt: kill the process in the middle of the host.
    await waitFor(
      'two instances evacuated and two under way',
      () => servers.filter((server) => bed.sim.evacuateCalls(server.id) > 0).length >= 4,
      30_000,
      20,
    );
    first.kill('SIGKILL');
    await first.exited;
    const finishedBeforeKill = servers.filter(
      (server) => bed.sim.model.servers.get(server.id)!.host !== 'compute1',
    );
    assert.ok(finishedBeforeKill.length >= 2);
    await start(bed, vhost, 'worker-b', instanceHa);
    const { result } = await bed.hostJobOutcome(jobId, 60_000);
    assert.equal(result?.outcome, 'evacuated');
    assert.equal(result?.evacuatedInstances.length, 8);
    for (const server of servers) {
      const state = bed.sim.model.servers.get(server.id)!;
      assert.equal(bed.sim.evacuateCalls(server.id), 1, `${server.name} evacuated exactly once`);
      assert.notEqual(state.host, 'compute1');
      assert.equal(state.vmState, 'active');
      assert.equal(state.locked, false);
    }
  });

  it('spreads the children of a 300-instance, 10-host incident over three processes, each instance evacuated exactly once', async () => {
    const vhost = await createTestVhost('evacuation-scale');
    vhosts.push(vhost);
    const bed = await EvacuationBed.start({
      inProcessWorker: false,
      cloud: { hosts: 30, model: { evacuation: { acceptMilliseconds: 20, rebuildMilliseconds: 300 } } },
    });
    beds.push(bed);
    const failed = Array.from({ length: 10 }, (_, index) => `compute${index + 1}`);
    const servers = failed.flatMap((host) =>
      Array.from({ length: 30 }, (_, index) => bed.sim.addServer({ host, name: `${host}-vm-${index}` })),
    );
    const instanceHa = { SMART_EVACUATION: 'true', EVACUATION_MAX_THREADS: '8', WORKERS: '4' };
    const workers = await Promise.all(
      ['worker-1', 'worker-2', 'worker-3'].map((name) => start(bed, vhost, name, instanceHa)),
    );
    const handed = await Promise.all(failed.map((host) => bed.failHost(host)));
    const outcomes = await Promise.all(handed.map(({ jobId }) => bed.hostJobOutcome(jobId, 120_000)));
    assert.deepEqual(
      outcomes.map(({ result }) => result?.outcome),
      failed.map(() => 'evacuated'),
    );
    for (const server of servers) {
      assert.equal(bed.sim.evacuateCalls(server.id), 1, `${server.name} evacuated exactly once`);
      assert.ok(
        !failed.includes(bed.sim.model.servers.get(server.id)!.host!),
        `${server.name} left its failed host`,
      );
    }
    const journal = new EventJournal(bed.redis, bed.prefix);
    const perProcess = new Map<string, number>();
    for (const { incident } of handed) {
      for (const event of await journal.incident(incident.id)) {
        if (event.type !== 'instance.evacuated') continue;
        perProcess.set(event.source.instance, (perProcess.get(event.source.instance) ?? 0) + 1);
      }
    }
    assert.equal(
      [...perProcess.values()].reduce((sum, count) => sum + count, 0),
      300,
    );
    for (const worker of workers) {
      assert.ok(
        (perProcess.get(worker.name) ?? 0) > 0,
        `${worker.name} evacuated some instances: ${JSON.stringify([...perProcess])}`,
      );
    }
  });

  it('reports ready and its metrics, hands watched evacuations back on SIGTERM within the shutdown budget, and another process finishes them', async () => {
    const vhost = await createTestVhost('evacuation-shutdown');
    vhosts.push(vhost);
    const bed = await EvacuationBed.start({
      inProcessWorker: false,
      cloud: { model: { evacuation: { acceptMilliseconds: 0, rebuildMilliseconds: 4000 } } },
    });
    beds.push(bed);
    const instanceHa = { SMART_EVACUATION: 'true', EVACUATION_MAX_THREADS: '4' };
    const servers = Array.from({ length: 4 }, () => bed.sim.addServer({ host: 'compute1' }));
    const first = await start(bed, vhost, 'worker-a', instanceHa, {
      LIFEGUARD_SHUTDOWN_TIMEOUT_SECONDS: '10',
    });
    const { jobId } = await bed.failHost('compute1');
    await waitFor(
      'every instance evacuating',
      () => servers.every((server) => bed.sim.evacuateCalls(server.id) === 1),
      20_000,
      20,
    );
    const base = `http://127.0.0.1:${first.httpPort()}`;
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    assert.match(
      metrics,
      /lifeguard_evacuate_requests_total\{result="accepted",service="evacuation-worker"\} 4/,
    );
    assert.match(metrics, /lifeguard_hosts_evacuating\{service="evacuation-worker"\} 1/);
    const stopping = Date.now();
    first.kill('SIGTERM');
    assert.equal(await first.exited, 0);
    assert.ok(Date.now() - stopping < 10_000, 'within the shutdown budget');
    assert.equal(
      first.messages().filter((message) => message.includes('handed back to the queue (shutdown)')).length,
      4,
    );
    await start(bed, vhost, 'worker-b', instanceHa);
    const { result } = await bed.hostJobOutcome(jobId, 60_000);
    assert.equal(result?.outcome, 'evacuated');
    for (const server of servers) assert.equal(bed.sim.evacuateCalls(server.id), 1);
  });
});
