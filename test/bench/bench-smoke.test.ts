// Every benchmark under bench/ in its smoke mode (`npm run bench -- <name> --smoke`: small sizes, one
// round) as a child process: it prints its figures and exits 0. And the ways a benchmark ends early —
// its time limit, SIGTERM — fail it naming the phase it was in and leave no vhost, no Redis key and no
// child process behind. The recovery benchmark needs real Nova: bench-recovery-smoke.real-nova.test.ts.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { RABBITMQ, testRedis, waitFor } from '@lifeguard/testing';

const root = resolve(import.meta.dirname, '../..');

interface BenchResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Sends a signal to `npm run bench` alone, or (`group`) to its whole process group as Ctrl-C does. */
type Signaller = (name: NodeJS.Signals, group: boolean) => void;

/**
 * `node scripts/run-bench.mjs <name> --smoke` in a process group of its own; `onStdout` sees its
 * output as it comes and may signal it.
 */
function runBench(
  name: string,
  environment: Record<string, string> = {},
  onStdout: (text: string, signal: Signaller) => void = () => undefined,
): Promise<BenchResult> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['scripts/run-bench.mjs', name, '--smoke'], {
      cwd: root,
      env: { ...process.env, ...environment },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      onStdout(stdout, (signal, group) => (group ? process.kill(-child.pid!, signal) : child.kill(signal)));
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/** Names of the RabbitMQ vhosts whose name starts with `prefix`. */
async function vhosts(prefix: string): Promise<string[]> {
  const response = await fetch(`${RABBITMQ.managementUrl}/api/vhosts`, {
    headers: {
      authorization: `Basic ${Buffer.from(`${RABBITMQ.user}:${RABBITMQ.password}`).toString('base64')}`,
    },
  });
  const list = (await response.json()) as Array<{ name: string }>;
  return list.map((each) => each.name).filter((name) => name.startsWith(prefix));
}

/**
 * Pids of processes whose environment holds `BENCH_TEST_TAG=<tag>` (the bench and its children), or
 * only those whose command line contains `command`.
 */
function taggedProcesses(tag: string, command?: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(`BENCH_TEST_TAG=${tag}`))
        continue;
      if (command === undefined || readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(command))
        found.push(Number(entry));
    } catch {
      // gone, or another user's process
    }
  }
  return found;
}

const SMOKE_RUNS: Array<{ name: string; figures: RegExp[] }> = [
  {
    name: 'provisioning',
    figures: [
      /1: baseline \(consume → confirmed publish → ack\) +[\d,]+ +[\d.]+/,
      /1: \+ port-status: completion → port ACTIVE +[\d,]+/,
      /ratio lifeguard \/ baseline \(median completions\/s to provisioning\.complete\): \d+\.\d\d/,
      /1: traffic floor: reply \+ event, no work +[\d,]+/,
      /ceiling on this machine, the traffic floor \/ baseline: \d+\.\d\d to provisioning\.complete/,
      /machine CPU ms per completion \(all cores\) +\d+\.\d{3}/,
    ],
  },
  {
    name: 'detection',
    figures: [
      /A\. detection latency, 50 hosts, POLL=2 s, DELTA=6 s, report_interval 2 s, 2 kills/,
      /min \d+\.\d\d s, median \d+\.\d\d s, p95 \d+\.\d\d s, max \d+\.\d\d s/,
      /target max <= bound \+ 1 s: \d+\.\d\d s, (MET|NOT MET)/,
      /B\. 50 services: CPU \d+\.\d ms per poll cycle/,
      /heap allocated per cycle \d+\.\d MB, \d+\.\d collections/,
    ],
  },
  {
    name: 'evacuation',
    figures: [/20 instances on 2 failed hosts/, /^ +1 +10 +\d+\.\d\d +\d+\.\d\d +\d+\.\d{3} /m],
  },
  {
    name: 'host-agent',
    figures: [
      /heartbeats received by the monitors: [1-9]\d*/,
      /^lifeguard-host-agent +\d+\.\d +\d+\.\d +\d+\.\d$/m,
    ],
  },
  {
    name: 'cloud-sim-scale',
    figures: [/scale mode: 50 hosts, 500 servers/, /GET \/os-services\?binary=nova-compute +\d+\.\d\d/],
  },
];

describe('benchmarks in smoke mode', () => {
  for (const { name, figures } of SMOKE_RUNS) {
    it(`npm run bench -- ${name} --smoke prints its figures and exits 0`, async () => {
      const result = await runBench(name);
      assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
      assert.match(result.stdout, /\(smoke\)/);
      for (const figure of figures) assert.match(result.stdout, figure, result.stdout);
    });
  }
});

describe('a benchmark that ends early', () => {
  it('fails at its time limit naming the phase it waited for, and leaves no vhost, key or process', async () => {
    const before = await vhosts('t-bench-provisioning-');
    const tag = randomUUID();
    const result = await runBench('provisioning', { BENCH_TIME_LIMIT_SECONDS: '2', BENCH_TEST_TAG: tag });
    assert.equal(result.code, 1, result.stderr);
    assert.match(
      result.stderr,
      /the provisioning benchmark failed: the time limit of 2 s \(BENCH_TIME_LIMIT_SECONDS\) passed while (creating a vhost|seeding \d+ ports|waiting for .+|sending \d+ .+)\n/,
    );
    assert.deepEqual(await vhosts('t-bench-provisioning-'), before, 'its vhost is deleted');
    assert.deepEqual(taggedProcesses(tag), [], 'no process of it is left');
  });

  it('stopped while a worker process starts, it shows what the worker wrote and leaves no process', async () => {
    const tag = randomUUID();
    let ended: BenchResult | null = null;
    const bench = runBench('evacuation', { BENCH_TEST_TAG: tag }).then((result) => {
      ended = result;
      return result;
    });
    // Until the bench's worker process appears (the evacuation worker runs from dist/ or src/: its
    // package folder is in its command line either way), or the bench ends without one; the bench's
    // own time limit (120 s in smoke mode) bounds the wait.
    const seen = await waitFor(
      'an evacuation worker process of the bench, or the bench to end',
      () => {
        if (ended !== null) return 'the bench ended first';
        if (taggedProcesses(tag, 'evacuation-worker').length === 0) return false;
        const [benchPid] = taggedProcesses(tag, 'evacuation.bench.ts');
        if (benchPid === undefined) return false;
        process.kill(benchPid, 'SIGTERM');
        return 'stopped';
      },
      180_000,
    );
    const result = await bench;
    assert.equal(
      seen,
      'stopped',
      `the bench ended before its worker started:\n${result.stdout}\n${result.stderr}`,
    );
    assert.notEqual(result.code, 0, result.stdout);
    assert.match(
      result.stderr,
      /the evacuation benchmark stopped by SIGTERM while starting 1 evacuation worker process\(es\)\n/,
    );
    assert.match(result.stderr, /the evacuation worker processes' last output:\n-- bench-worker-1:\n/);
    assert.doesNotMatch(result.stderr, /could not clean up/);
    await waitFor('no process of it left', () => taggedProcesses(tag).length === 0, 20_000, 200);
  });

  for (const { way, signal, group } of [
    { way: 'SIGTERM to npm run bench', signal: 'SIGTERM', group: false },
    { way: 'Ctrl-C (SIGINT to the whole process group)', signal: 'SIGINT', group: true },
  ] as const) {
    it(`on ${way} in the middle of a measurement stops its children, deletes its vhost and keys, and exits`, async () => {
      const before = await vhosts('t-bench-provisioning-');
      const tag = randomUUID();
      let sent = false;
      const result = await runBench('provisioning', { BENCH_TEST_TAG: tag }, (stdout, send) => {
        if (!sent && stdout.includes('round / measurement')) {
          sent = true;
          send(signal, group);
        }
      });
      assert.ok(sent, result.stdout);
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, new RegExp(`the provisioning benchmark stopped by ${signal} while \\S`));
      assert.doesNotMatch(result.stderr, /could not clean up/);
      assert.deepEqual(await vhosts('t-bench-provisioning-'), before, 'its vhost is deleted');
      await waitFor('no process of it left', () => taggedProcesses(tag).length === 0, 20_000, 200);
      const prefix = /Redis keys (\S+):\*/.exec(result.stdout)?.[1];
      assert.ok(prefix, 'the bench names its key prefix');
      const redis = testRedis();
      try {
        const [, keys] = await redis.scan('0', 'MATCH', `${prefix}:*`, 'COUNT', 100_000);
        assert.deepEqual(keys, [], 'its Redis keys are deleted');
      } finally {
        redis.disconnect();
      }
    });
  }
});
