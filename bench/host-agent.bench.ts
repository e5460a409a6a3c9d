// The host agent's cost on a compute: resident memory and CPU per hour of `lifeguard-host-agent`
// (compiled, as a host runs it) sending its heartbeat every second over two networks to two monitors
// each, reading /proc for nova-compute and libvirtd at every heartbeat; beside it, in the same run,
// the baseline: a bare Node.js process that only keeps a one-second timer.
// Settings: BENCH_SECONDS (how long each process is measured; 120, 5 in smoke mode).
// It creates nothing outside this process but the two child processes and a key file, removed on every way out.
import { type ChildProcess, spawn } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BenchRun, SMOKE, setting } from './support/bench-run.ts';

const SECONDS = setting('BENCH_SECONDS', 120, 5);
const bench = new BenchRun('the host agent benchmark', SECONDS * 2 + 120);
const CLOCK_TICKS_PER_SECOND = 100;
const agentMain = resolve(import.meta.dirname, '../packages/host-agent/dist/main.js');

/** Resident memory now and at its peak (KiB), and CPU seconds used so far, of process `pid`. */
function usage(pid: number): { rssKib: number; peakKib: number; cpuSeconds: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of stat(5); fields[0] is field 3.
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { rssKib: kib('VmRSS'), peakKib: kib('VmHWM'), cpuSeconds: ticks / CLOCK_TICKS_PER_SECOND };
}

/** Measures `child` for SECONDS after it settled: CPU seconds per hour and memory. */
async function measure(
  child: ChildProcess,
  label: string,
): Promise<{ cpuPerHour: number; rssMib: number; peakMib: number }> {
  bench.phase(`measuring ${label} for ${SECONDS} s`);
  const pid = child.pid!;
  // Start-up (loading modules) is not what a host pays per hour: measure from two seconds in.
  await new Promise((done) => setTimeout(done, 2000));
  const start = usage(pid);
  const startedAt = process.hrtime.bigint();
  await new Promise((done) => setTimeout(done, SECONDS * 1000));
  const end = usage(pid);
  const elapsed = Number(process.hrtime.bigint() - startedAt) / 1e9;
  return {
    cpuPerHour: ((end.cpuSeconds - start.cpuSeconds) / elapsed) * 3600,
    rssMib: end.rssKib / 1024,
    peakMib: end.peakKib / 1024,
  };
}

function startChild(args: string[], env: NodeJS.ProcessEnv, label: string): ChildProcess {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  bench.explainOnFailure(label, () => errors);
  bench.resource(label, () => child.kill('SIGKILL'));
  return child;
}

await bench.run(async () => {
  if (!existsSync(agentMain)) throw new Error(`${agentMain} is missing: run npm run build first`);
  const directory = mkdtempSync(join(tmpdir(), 'host-agent-bench-'));
  bench.resource('the key directory', () => rmSync(directory, { recursive: true, force: true }));
  const keyPath = join(directory, 'hmac-key');
  writeFileSync(keyPath, '7e'.repeat(32));
  const sinks: Socket[] = [];
  let received = 0;
  for (let index = 0; index < 2; index++) {
    const sink = createSocket('udp4');
    sink.on('message', () => received++);
    await new Promise<void>((done) => sink.bind(0, '127.0.0.1', done));
    sinks.push(sink);
    bench.resource(`monitor ${index}`, () => sink.close());
  }
  const monitors = sinks.map((sink) => `127.0.0.1:${sink.address().port}`).join(',');

  const baseline = startChild(['-e', 'setInterval(() => {}, 1000)'], {}, 'the baseline process');
  const agent = startChild(
    [agentMain],
    {
      HOST_AGENT_HOST: 'compute-bench',
      HEARTBEAT_HMAC_KEY_PATH: keyPath,
      HEARTBEAT_NETWORK_MANAGEMENT: `${monitors} from 127.0.0.1`,
      HEARTBEAT_NETWORK_STORAGE: monitors,
      LIFEGUARD_HTTP_PORT: '0',
    },
    'the host agent',
  );
  const [bare, measured] = await Promise.all([
    measure(baseline, 'the baseline'),
    measure(agent, 'the host agent'),
  ]);
  if (agent.exitCode !== null) throw new Error(`the host agent exited with status ${agent.exitCode}`);

  const load = loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
  console.log(
    `host agent benchmark${SMOKE ? ' (smoke)' : ''}: ${SECONDS} s per process, 1 heartbeat/s over 2 networks to 2 monitors each; ${cpus().length} CPUs, load ${load}`,
  );
  console.log(
    `heartbeats received by the monitors: ${received} (${(received / (SECONDS + 2)).toFixed(1)}/s)`,
  );
  console.log('process                 CPU s/hour   RSS MiB   peak RSS MiB');
  const row = (name: string, figures: typeof bare) =>
    console.log(
      `${name.padEnd(22)} ${figures.cpuPerHour.toFixed(1).padStart(10)} ${figures.rssMib.toFixed(1).padStart(9)} ${figures.peakMib.toFixed(1).padStart(14)}`,
    );
  row('baseline (bare node)', bare);
  row('lifeguard-host-agent', measured);
  // A bare timer may use no measurable CPU (under one clock tick) in a short run: no ratio then.
  const cpuRatio =
    bare.cpuPerHour >= 1
      ? `${(measured.cpuPerHour / bare.cpuPerHour).toFixed(1)}x`
      : 'n/a (baseline under 1 s/hour)';
  console.log(`ratio to the baseline: CPU ${cpuRatio}, RSS ${(measured.rssMib / bare.rssMib).toFixed(2)}x`);
});
