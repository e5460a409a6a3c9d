// Evacuation benchmark (issue 7): cloud-sim with 1,000 instances on 20 failed hosts (50 each, among
// 60 compute hosts), evacuate accepted in 50 ms and rebuilt in 2 s, SMART_EVACUATION on. For 1, 2 and
// 4 evacuation worker processes (real processes, real Redis/BullMQ and RabbitMQ) at a fixed
// per-process concurrency (EVACUATION_MAX_THREADS), it measures the wall time from handing the 20
// fenced hosts over (20 `evacuate-host` jobs) until all 1,000 instances are ACTIVE on another host,
// and compares it with the ideal for that concurrency: instances × rebuild time ÷ total concurrency.
// Targets: within 1.2× of ideal, and 4 processes at least 3.2× faster than one.
//
// Settings: BENCH_INSTANCES (1000), BENCH_FAILED_HOSTS (20), BENCH_CONCURRENCY per process (25),
// BENCH_PROCESSES ("1,2,4"), BENCH_FIRST_CHECK_SECONDS (2) and BENCH_POLL_SECONDS (0.1): the
// worker's LIFEGUARD_EVACUATION_FIRST_CHECK_SECONDS / _POLL_SECONDS, set as an operator would for
// this cloud: the first look when a rebuild should be done, then short looks (InstanceHA's fixed
// 10 s / 5 s would make every 2 s rebuild hold its slot 10 s). BENCH_TIME_LIMIT_SECONDS (1800).
// Smoke mode (BENCH_SMOKE=1 or --smoke; 120 s limit): 20 instances on 2 failed hosts, one process of
// concurrency 10.
// The machine's load average is printed with each run: on a shared 2-core machine other work slows
// the four-process run most (100 evacuations and the simulated cloud compete for two cores).
// Cluster mode (BENCH_CLUSTER=1, or --cluster): after every run on the single RabbitMQ and Redis, the
// same runs again on a 3-node RabbitMQ cluster and a Redis Cluster (3 masters + 3 replicas) started
// here (bench/support/cluster-engines.ts; the workers get every node's URL and
// LIFEGUARD_REDIS_CLUSTER_NODES with a {hash-tagged} prefix), then the wall times side by side with
// cluster / single. Its smoke mode has a 600 s limit (3 RabbitMQ nodes start slowly on a busy machine).
import { loadavg } from 'node:os';
import { JOB_NAMES } from '@lifeguard/contracts';
import { EventJournal } from '@lifeguard/runtime';
import { createTestVhost, randomKeyPrefix, waitFor } from '@lifeguard/testing';
import { Cluster } from 'ioredis';
import { EvacuationBed } from '../../packages/evacuation-worker/test/support/evacuation-bed.ts';
import { WorkerProcess } from '../../packages/evacuation-worker/test/support/worker-process.ts';
import { BenchRun, CLUSTER, SMOKE, setting } from '../support/bench-run.ts';
import { type ClusterEngines, startClusterEngines } from '../support/cluster-engines.ts';

const INSTANCES = setting('BENCH_INSTANCES', 1000, 20);
const FAILED_HOSTS = setting('BENCH_FAILED_HOSTS', 20, 2);
const CONCURRENCY = setting('BENCH_CONCURRENCY', 25, 10);
const PROCESSES: number[] = (process.env.BENCH_PROCESSES ?? (SMOKE ? '1' : '1,2,4')).split(',').map(Number);
const bench = new BenchRun('the evacuation benchmark', SMOKE ? (CLUSTER ? 600 : 120) : CLUSTER ? 3600 : 1800);
const ACCEPT_MILLISECONDS = 50;
const REBUILD_MILLISECONDS = 2000;
const FIRST_CHECK_SECONDS = process.env.BENCH_FIRST_CHECK_SECONDS ?? '2';
const POLL_SECONDS = process.env.BENCH_POLL_SECONDS ?? '0.1';

interface Run {
  processes: number;
  /** The machine's 1-minute load average when the run ended (other work on the machine skews timings). */
  load: number;
  seconds: number;
  idealSeconds: number;
  evacuateCalls: number;
  perProcess: number[];
}

/** The vhost of a run: a fresh one on the shared RabbitMQ, or the clusters' one (nothing to delete). */
async function runVhost(clusters: ClusterEngines | null): Promise<[{ url: string }, () => Promise<void>]> {
  if (clusters) return [{ url: clusters.amqpUrls }, async () => undefined];
  return bench.acquire(
    'the vhost',
    () => createTestVhost('bench-evacuation'),
    (created) => created.delete(),
  );
}

/** The workers' Redis settings on the clusters (none on the single engines: the test Redis). */
function clusterEnvironment(clusters: ClusterEngines | null): Record<string, string> {
  if (!clusters) return {};
  // With cluster nodes the URL gives only credentials and TLS (none here), and database 0.
  return {
    LIFEGUARD_REDIS_URL: 'redis://127.0.0.1:6379/0',
    LIFEGUARD_REDIS_CLUSTER_NODES: clusters.redisNodes,
  };
}

/** The bed's Redis on the clusters: BullMQ-ready Cluster clients and a {hash-tagged} prefix. */
function clusterRedis(clusters: ClusterEngines) {
  const prefix = `{${randomKeyPrefix('bench-evacuation')}}`;
  const nodes = clusters.redisNodes.split(',').map((node) => {
    const [host, port] = node.split(':');
    return { host: host!, port: Number(port) };
  });
  return { prefix, connect: () => new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: null } }) };
}

/** One run of `processes` worker processes, on the single engines or (`clusters`) on the clusters. */
async function measure(processes: number, clusters: ClusterEngines | null = null): Promise<Run> {
  bench.phase(`starting the bed for ${processes} process(es)${clusters ? ' on the clusters' : ''}`);
  const [vhost, deleteVhost] = await runVhost(clusters);
  const [bed, closeBed] = await bench.acquire(
    'the bed (cloud-sim, Redis keys, queues)',
    () =>
      EvacuationBed.start({
        inProcessWorker: false,
        ...(clusters ? { redis: clusterRedis(clusters) } : {}),
        cloud: {
          hosts: FAILED_HOSTS * 3,
          model: {
            evacuation: {
              acceptMilliseconds: ACCEPT_MILLISECONDS,
              rebuildMilliseconds: REBUILD_MILLISECONDS,
            },
          },
        },
      }),
    (created) => created.close(),
  );
  const workers: WorkerProcess[] = [];
  const stopWorkers = bench.resource('the evacuation worker processes', () =>
    Promise.all(workers.map((worker) => worker.stop())),
  );
  bench.explainOnFailure("the evacuation worker processes' last output", () =>
    workers.map((worker) => `-- ${worker.name}:\n${worker.lastLines(30)}`).join('\n'),
  );
  try {
    const failed = Array.from({ length: FAILED_HOSTS }, (_, index) => `compute${index + 1}`);
    const servers = Array.from({ length: INSTANCES }, (_, index) =>
      bed.sim.addServer({ host: failed[index % FAILED_HOSTS]!, name: `vm-${index}` }),
    );
    bench.phase(`starting ${processes} evacuation worker process(es)`);
    for (let index = 0; index < processes; index++) {
      // Registered as soon as it is spawned: a time limit while it starts stops it and shows its output.
      await WorkerProcess.start(bed, {
        onSpawn: (worker) => workers.push(worker),
        name: `bench-worker-${index + 1}`,
        amqpUrl: vhost.url,
        instanceHa: {
          SMART_EVACUATION: 'true',
          EVACUATION_MAX_THREADS: String(CONCURRENCY),
          WORKERS: '4',
          EVACUATION_TIMEOUT: '300',
        },
        environment: {
          ...clusterEnvironment(clusters),
          LIFEGUARD_EVACUATION_FIRST_CHECK_SECONDS: FIRST_CHECK_SECONDS,
          LIFEGUARD_EVACUATION_POLL_SECONDS: POLL_SECONDS,
          LIFEGUARD_JOB_LOCK_SECONDS: '30',
          LIFEGUARD_JOB_STALLED_CHECK_SECONDS: '30',
          // The tests' mark on every process a benchmark starts (they look for what is left).
          ...(process.env.BENCH_TEST_TAG ? { BENCH_TEST_TAG: process.env.BENCH_TEST_TAG } : {}),
        },
      });
    }
    // Fence and mark every failed host first (the fencing worker's part), then hand them over at once.
    bench.phase(`fencing and marking ${FAILED_HOSTS} failed hosts in the simulated cloud`);
    const handed = [];
    for (const host of failed) handed.push(await bed.failHost(host, { addJob: false }));
    const started = performance.now();
    await bed.evacuationQueue.addBulk(
      handed.map(({ data, jobId }) => ({ name: JOB_NAMES.evacuateHost, data, opts: { jobId } })),
    );
    const failedSet = new Set(failed);
    bench.phase(`waiting for ${INSTANCES} instances ACTIVE on another host`);
    await waitFor(
      'every instance ACTIVE on another host',
      () =>
        servers.every((server) => {
          const state = bed.sim.model.servers.get(server.id)!;
          return !failedSet.has(state.host!) && state.vmState === 'active' && state.taskState === null;
        }),
      600_000,
      20,
    );
    const seconds = (performance.now() - started) / 1000;
    bench.phase('waiting for the host jobs to end');
    const outcomes = await Promise.all(handed.map(({ jobId }) => bed.hostJobOutcome(jobId, 120_000)));
    const notEvacuated = outcomes.filter(({ result }) => result?.outcome !== 'evacuated').length;
    if (notEvacuated > 0) throw new Error(`${notEvacuated} host job(s) did not end evacuated`);
    const calls = Object.values(bed.sim.evacuateCalls()).reduce((sum, count) => sum + count, 0);
    // Who evacuated what: the `instance.evacuated` events in each incident's journal, by process.
    const journal = new EventJournal(bed.redis, bed.prefix);
    const counts = new Map<string, number>();
    for (const { incident } of handed) {
      for (const event of await journal.incident(incident.id)) {
        if (event.type !== 'instance.evacuated') continue;
        counts.set(event.source.instance, (counts.get(event.source.instance) ?? 0) + 1);
      }
    }
    const perProcess = workers.map((worker) => counts.get(worker.name) ?? 0);
    return {
      processes,
      load: loadavg()[0] ?? 0,
      seconds,
      idealSeconds: (INSTANCES * REBUILD_MILLISECONDS) / 1000 / (processes * CONCURRENCY),
      evacuateCalls: calls,
      perProcess,
    };
  } finally {
    await stopWorkers();
    workers.length = 0;
    await closeBed();
    await deleteVhost();
  }
}

const runs: Run[] = [];
const clusterRuns: Run[] = [];
let clusterDescription = '';
await bench.run(async () => {
  if (SMOKE) process.stdout.write('smoke run: small sizes, one round\n');
  for (const processes of PROCESSES) {
    process.stdout.write(`running ${processes} worker process(es) × concurrency ${CONCURRENCY} ...\n`);
    runs.push(await measure(processes));
  }
  if (!CLUSTER) return;
  const clusters = await startClusterEngines(bench, 'bench-evacuation');
  clusterDescription = clusters.description;
  for (const processes of PROCESSES) {
    process.stdout.write(
      `running ${processes} worker process(es) × concurrency ${CONCURRENCY} on the clusters ...\n`,
    );
    clusterRuns.push(await measure(processes, clusters));
  }
});

/** The table of `list`'s runs; returns whether they met the targets. */
function printRuns(list: Run[]): boolean {
  const one = list.find((run) => run.processes === 1);
  process.stdout.write(
    'processes  concurrency  wall time (s)  ideal (s)  ratio to ideal  speed-up vs 1  evacuate calls  load  instances per process\n',
  );
  let ok = true;
  for (const run of list) {
    const ratio = run.seconds / run.idealSeconds;
    const speedup = one ? one.seconds / run.seconds : Number.NaN;
    if (ratio > 1.2) ok = false;
    if (run.processes === 4 && one && speedup < 3.2) ok = false;
    if (run.evacuateCalls !== INSTANCES) ok = false;
    process.stdout.write(
      `${String(run.processes).padStart(9)}  ${String(run.processes * CONCURRENCY).padStart(11)}  ${run.seconds.toFixed(2).padStart(13)}  ${run.idealSeconds.toFixed(2).padStart(9)}  ${ratio.toFixed(3).padStart(14)}  ${speedup.toFixed(2).padStart(13)}  ${String(run.evacuateCalls).padStart(14)}  ${run.load.toFixed(1).padStart(4)}  ${run.perProcess.join('/')}\n`,
    );
  }
  return ok;
}

process.stdout.write(
  `\n${INSTANCES} instances on ${FAILED_HOSTS} failed hosts, evacuate accepted in ${ACCEPT_MILLISECONDS} ms, rebuilt in ${REBUILD_MILLISECONDS / 1000} s, SMART_EVACUATION, first look ${FIRST_CHECK_SECONDS} s, poll ${POLL_SECONDS} s\n`,
);
if (CLUSTER) process.stdout.write('on the single RabbitMQ and Redis:\n');
const ok = printRuns(runs);
process.stdout.write(
  SMOKE
    ? '\nsmoke run: the targets are judged only in a full run\n'
    : `\ntargets: every run within 1.2× of ideal; 4 processes ≥ 3.2× faster than 1; each instance evacuated once → ${ok ? 'MET' : 'NOT MET'}\n`,
);
if (CLUSTER) {
  process.stdout.write(`\non the clusters: ${clusterDescription}\n`);
  printRuns(clusterRuns);
  process.stdout.write(
    '\ncluster / single\nprocesses  single wall time (s)  cluster wall time (s)  cluster / single  load single / cluster\n',
  );
  for (const [index, run] of runs.entries()) {
    const other = clusterRuns[index]!;
    process.stdout.write(
      `${String(run.processes).padStart(9)}  ${run.seconds.toFixed(2).padStart(19)}  ${other.seconds.toFixed(2).padStart(21)}  ${(other.seconds / run.seconds).toFixed(2).padStart(16)}  ${`${run.load.toFixed(1)} / ${other.load.toFixed(1)}`.padStart(21)}\n`,
    );
  }
}
process.exit(0);
