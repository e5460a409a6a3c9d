// Runs the benchmarks under bench/ (every *.bench.ts, or those whose path starts with an argument),
// one after the other, each in its own Node process from TypeScript source (tsx + the
// @lifeguard/source export condition). A benchmark prints its figures and the ratio to a baseline it
// measures in the same run; the exit status is non-zero when one of them fails to run.
//
// Usage: npm run bench [-- bench/cloud-sim-scale ...]
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const files = [];
const walk = (directory) => {
  for (const name of readdirSync(directory)) {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (name.endsWith('.bench.ts')) files.push(path);
  }
};
walk(join(root, 'bench'));
files.sort();
const filters = process.argv.slice(2).map((argument) => relative(root, resolve(argument)));
const selected = filters.length
  ? files.filter((file) => filters.some((filter) => relative(root, file).startsWith(filter)))
  : files;
if (selected.length === 0) {
  console.error(`no benchmarks match ${filters.join(', ') || 'bench/'}`);
  process.exit(1);
}
let failed = 0;
for (const file of selected) {
  console.log(`\n== ${relative(root, file)}`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--conditions=@lifeguard/source', file], {
    stdio: 'inherit',
    cwd: root,
  });
  if (result.status !== 0) failed++;
}
process.exit(failed > 0 ? 1 : 0);
