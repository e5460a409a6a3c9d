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
// Each run also counts the simulated cloud's API requests made while it ran, by kind, per instance
// (where the round trips go). BENCH_LOG_DIRECTORY=<dir> keeps every worker process's log lines there,
// and the cloud's requests of each run (method, path, action, when received) as JSON lines;
// BENCH_CPU_PROFILE_DIRECTORY=<dir> has each worker process write a V8 CPU profile (--cpu-prof) there
// when it stops (docs/profiles/evacuation.md says how they were read).
// Cluster mode (BENCH_CLUSTER=1, or --cluster): after every run on the single RabbitMQ and Redis, the
// same runs again on a 3-node RabbitMQ cluster and a Redis Cluster (3 masters + 3 replicas) started
// here (bench/support/cluster-engines.ts; the workers get every node's URL and
// LIFEGUARD_REDIS_CLUSTER_NODES with a {hash-tagged} prefix), then the wall times side by side with
// cluster / single. Its smoke mode has a 600 s limit (3 RabbitMQ nodes start slowly on a busy machine).
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { RecordedRequest } from '@lifeguard/cloud-sim';
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
const LOG_DIRECTORY = process.env.BENCH_LOG_DIRECTORY || null;
const CPU_PROFILE_DIRECTORY = process.env.BENCH_CPU_PROFILE_DIRECTORY || null;
/** Within this factor of the ideal wall time, for every process count. */
const IDEAL_FACTOR = 1.2;
/** 4 processes at least this many times faster than one. */
const FOUR_PROCESS_SPEEDUP = 3.2;

interface Run {
  processes: number;
  /** The machine's 1-minute load average when the run ended (other work on the machine skews timings). */
  load: number;
  seconds: number;
  idealSeconds: number;
  evacuateCalls: number;
  perProcess: number[];
  /** The cloud's API requests during the run, by kind (requestKind). */
  requests: Map<string, number>;
  /** CPU milliseconds per instance while the run lasted: the worker processes', and this process's (the cloud). */
  cpu: { workers: number; cloud: number };
}

/** The CPU seconds the worker processes used so far, and this process's (the cloud, the bench). */
function cpuNow(workers: ReadonlyArray<WorkerProcess>): { workers: number; cloud: number } {
  const { user, system } = process.cpuUsage();
  return {
    workers: workers.reduce((sum, worker) => sum + (worker.cpuSeconds() ?? Number.NaN), 0),
    cloud: (user + system) / 1e6,
  };
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** A request's kind, its ids and query values left out: `GET /servers/{id}`, `POST /servers/{id}/action lock`. */
function requestKind(request: RecordedRequest): string {
  const [path = '', query] = request.url.replace(/^\/compute\/v2\.1/, '').split('?');
  const keys = query ? `?${[...new URLSearchParams(query).keys()].join('&')}` : '';
  const action =
    request.body !== null && typeof request.body === 'object'
      ? ` ${Object.keys(request.body).join(',')}`
      : '';
  return `${request.method} ${path.replace(UUID, '{id}')}${keys}${request.method === 'POST' ? action : ''}`;
}

/** The requests received since `since`, counted by kind. */
function countRequests(requests: ReadonlyArray<RecordedRequest>, since: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of requests) {
    if (request.receivedAt < since) continue;
    const kind = requestKind(request);
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return counts;
}

/**
 * Keeps each worker's log lines in LOG_DIRECTORY (when set), and the cloud's API requests of the run
 * (method, path, when received and answered) as `<processes>p-requests.jsonl`.
 */
function keepLogs(
  processes: number,
  workers: ReadonlyArray<WorkerProcess>,
  clusters: boolean,
  requests: ReadonlyArray<RecordedRequest>,
): void {
  if (LOG_DIRECTORY === null) return;
  mkdirSync(LOG_DIRECTORY, { recursive: true });
  const run = `${processes}p${clusters ? '-cluster' : ''}`;
  for (const worker of workers) {
    writeFileSync(join(LOG_DIRECTORY, `${run}-${worker.name}.log`), `${worker.lines.join('\n')}\n`);
  }
  const lines = requests.map(({ method, url, body, receivedAt }) =>
    JSON.stringify({
      method,
      url,
      action: body && typeof body === 'object' ? Object.keys(body)[0] : null,
      receivedAt,
    }),
  );
  writeFileSync(join(LOG_DIRECTORY, `${run}-requests.jsonl`), `${lines.join('\n')}\n`);
}

/** The node options that make a worker write its CPU profile when it stops (CPU_PROFILE_DIRECTORY set). */
function profileArguments(processes: number, clusters: boolean): string[] {
  if (CPU_PROFILE_DIRECTORY === null) return [];
  const directory = join(CPU_PROFILE_DIRECTORY, `${processes}p${clusters ? '-cluster' : ''}`);
  mkdirSync(directory, { recursive: true });
  return ['--cpu-prof', `--cpu-prof-dir=${directory}`];
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
        nodeArguments: profileArguments(processes, clusters !== null),
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
    const cpuBefore = cpuNow(workers);
    const started = performance.now();
    const startedAt = Date.now();
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
    const cpuAfter = cpuNow(workers);
    const cpu = {
      workers: ((cpuAfter.workers - cpuBefore.workers) * 1000) / INSTANCES,
      cloud: ((cpuAfter.cloud - cpuBefore.cloud) * 1000) / INSTANCES,
    };
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
    const requests = countRequests(bed.sim.requests.requests, startedAt);
    return {
      processes,
      load: loadavg()[0] ?? 0,
      seconds,
      idealSeconds: (INSTANCES * REBUILD_MILLISECONDS) / 1000 / (processes * CONCURRENCY),
      evacuateCalls: calls,
      perProcess,
      requests,
      cpu,
    };
  } finally {
    await stopWorkers();
    keepLogs(processes, workers, clusters !== null, bed.sim.requests.requests);
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

/** The table of `list`'s runs. */
function printRuns(list: Run[]): void {
  const one = list.find((run) => run.processes === 1);
  process.stdout.write(
    'processes  concurrency  wall time (s)  ideal (s)  ratio to ideal  speed-up vs 1  evacuate calls  load  instances per process\n',
  );
  for (const run of list) {
    const ratio = run.seconds / run.idealSeconds;
    const speedup = one ? one.seconds / run.seconds : Number.NaN;
    process.stdout.write(
      `${String(run.processes).padStart(9)}  ${String(run.processes * CONCURRENCY).padStart(11)}  ${run.seconds.toFixed(2).padStart(13)}  ${run.idealSeconds.toFixed(2).padStart(9)}  ${ratio.toFixed(3).padStart(14)}  ${speedup.toFixed(2).padStart(13)}  ${String(run.evacuateCalls).padStart(14)}  ${run.load.toFixed(1).padStart(4)}  ${run.perProcess.join('/')}\n`,
    );
  }
}

/** The cloud's API requests per instance, by kind, one column per run. */
function printRequests(list: Run[]): void {
  const kinds = [...new Set(list.flatMap((run) => [...run.requests.keys()]))].sort();
  const width = Math.max(...kinds.map((kind) => kind.length), 'request'.length);
  process.stdout.write(
    `\nAPI requests per instance (${INSTANCES} instances)\n${'request'.padEnd(width)}${list.map((run) => `  ${`${run.processes} proc.`.padStart(8)}`).join('')}\n`,
  );
  const perInstance = (count: number) => (count / INSTANCES).toFixed(2).padStart(8);
  for (const kind of kinds) {
    const cells = list.map((run) => `  ${perInstance(run.requests.get(kind) ?? 0)}`).join('');
    process.stdout.write(`${kind.padEnd(width)}${cells}\n`);
  }
  const totals = list.map((run) => {
    const total = [...run.requests.values()].reduce((sum, count) => sum + count, 0);
    return `  ${perInstance(total)}`;
  });
  process.stdout.write(`${'all'.padEnd(width)}${totals.join('')}\n`);
  const cpu = (pick: (run: Run) => number) =>
    list.map((run) => `  ${pick(run).toFixed(1).padStart(8)}`).join('');
  process.stdout.write(
    `\nCPU per instance while the runs lasted (ms)\n${'worker processes'.padEnd(width)}${cpu((run) => run.cpu.workers)}\n${'the cloud (this process)'.padEnd(width)}${cpu((run) => run.cpu.cloud)}\n`,
  );
}

/** Each target next to its figure, MET or NOT MET; returns whether every one was met. */
function printTargets(list: Run[]): boolean {
  const one = list.find((run) => run.processes === 1);
  const judged: Array<{ target: string; figure: string; met: boolean }> = [];
  for (const run of list) {
    const ratio = run.seconds / run.idealSeconds;
    judged.push({
      target: `${run.processes} process(es): wall time ≤ ${IDEAL_FACTOR}× ideal`,
      figure: `${ratio.toFixed(3)}× (${run.seconds.toFixed(2)} s, ideal ${run.idealSeconds.toFixed(2)} s, load ${run.load.toFixed(1)})`,
      met: ratio <= IDEAL_FACTOR,
    });
    judged.push({
      target: `${run.processes} process(es): each instance evacuated once`,
      figure: `${run.evacuateCalls} evacuate calls for ${INSTANCES} instances`,
      met: run.evacuateCalls === INSTANCES,
    });
  }
  const four = list.find((run) => run.processes === 4);
  if (one && four) {
    const speedup = one.seconds / four.seconds;
    judged.push({
      target: `4 processes ≥ ${FOUR_PROCESS_SPEEDUP}× faster than 1`,
      figure: `${speedup.toFixed(2)}×`,
      met: speedup >= FOUR_PROCESS_SPEEDUP,
    });
  }
  const width = Math.max(...judged.map((each) => each.target.length));
  process.stdout.write('\ntargets\n');
  for (const { target, figure, met } of judged) {
    process.stdout.write(`${target.padEnd(width)}  ${(met ? 'MET' : 'NOT MET').padEnd(7)}  ${figure}\n`);
  }
  return judged.every((each) => each.met);
}

process.stdout.write(
  `\n${INSTANCES} instances on ${FAILED_HOSTS} failed hosts, evacuate accepted in ${ACCEPT_MILLISECONDS} ms, rebuilt in ${REBUILD_MILLISECONDS / 1000} s, SMART_EVACUATION, first look ${FIRST_CHECK_SECONDS} s, poll ${POLL_SECONDS} s\n`,
);
if (CLUSTER) process.stdout.write('on the single RabbitMQ and Redis:\n');
printRuns(runs);
printRequests(runs);
if (SMOKE) process.stdout.write('\nsmoke run: the targets are judged only in a full run\n');
else {
  const met = printTargets(runs);
  process.stdout.write(`all targets → ${met ? 'MET' : 'NOT MET'}\n`);
}
if (CLUSTER) {
  process.stdout.write(`\non the clusters: ${clusterDescription}\n`);
  printRuns(clusterRuns);
  printRequests(clusterRuns);
  if (!SMOKE) printTargets(clusterRuns);
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
