// Runs the benchmarks under bench/ (every `*.bench.ts`, or those under the given path prefixes), one
// after the other, from TypeScript source (tsx + the @lifeguard/source export condition). Each
// benchmark prints its own figures and ratios against a baseline measured in the same run.
//
// Usage: npm run bench [-- <path prefix> ...] [--smoke] [--cluster]   e.g. npm run bench -- bench/detection (or: -- detection)
// --smoke (or BENCH_SMOKE=1): small sizes and one round, seconds per benchmark (what the tests run).
// --cluster (or BENCH_CLUSTER=1): the benchmarks that have a cluster mode (provisioning) measure on the
// single RabbitMQ and Redis first, then on a 3-node RabbitMQ cluster and a Redis Cluster they start
// themselves, and print both side by side; the others ignore it.
// SIGINT and SIGTERM are passed on to the running benchmark, which cleans up and exits.
// Benchmarks named *.real-nova.bench.ts run against the real-Nova harness, started (or reused) as
// `npm test` does for *.real-nova.test.ts (see scripts/real-nova-harness.mjs).
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { ensureRealNova } from './real-nova-harness.mjs';

const root = resolve(import.meta.dirname, '..');
const files = [];
const walk = (directory) => {
  for (const name of readdirSync(directory)) {
    if (name === 'node_modules') continue;
    const path = join(directory, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (name.endsWith('.bench.ts')) files.push(path);
  }
};
if (existsSync(join(root, 'bench'))) walk(join(root, 'bench'));
files.sort();
const smoke = process.argv.includes('--smoke') || process.env.BENCH_SMOKE === '1';
const cluster = process.argv.includes('--cluster') || process.env.BENCH_CLUSTER === '1';
const filters = process.argv
  .slice(2)
  .filter((argument) => argument !== '--smoke' && argument !== '--cluster')
  .map((argument) => relative(root, resolve(argument)));
const selected = filters.length
  ? files.filter((file) =>
      filters.some(
        // `npm run bench -- evacuation` is short for `npm run bench -- bench/evacuation`.
        (filter) =>
          relative(root, file).startsWith(filter) || relative(root, file).startsWith(join('bench', filter)),
      ),
    )
  : files;
if (selected.length === 0) {
  console.error(`no benchmark matches ${filters.join(', ') || 'bench/'}`);
  process.exit(1);
}
const harness = selected.some((file) => file.endsWith('.real-nova.bench.ts'))
  ? await ensureRealNova(root)
  : null;
let failed = 0;
let stopping = null;
let running = null;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stopping = signal;
    running?.kill(signal);
  });
}
for (const file of selected) {
  if (stopping) break;
  const modes = [smoke ? 'smoke' : null, cluster ? 'cluster' : null].filter(Boolean);
  process.stdout.write(`\n== ${relative(root, file)}${modes.length ? ` (${modes.join(', ')})` : ''}\n`);
  running = spawn(process.execPath, ['--import', 'tsx', '--conditions=@lifeguard/source', file], {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      ...(smoke ? { BENCH_SMOKE: '1' } : {}),
      ...(cluster ? { BENCH_CLUSTER: '1' } : {}),
    },
  });
  const status = await new Promise((done) => running.once('close', (code) => done(code)));
  running = null;
  if (status !== 0) failed++;
}
await harness?.stop();
process.exit(failed > 0 ? 1 : 0);
