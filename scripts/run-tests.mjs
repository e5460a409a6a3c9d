// Runs every test file of the monorepo in one node:test invocation and ends with the line
// "N passed, N failed, N skipped". Tests run from TypeScript source (tsx + the @lifeguard/source
// export condition), so no build is needed first.
//
// Usage: npm test [-- <path prefix> ...]   e.g. npm test -- packages/contracts test/e2e
//        npm run test:faults [-- <path prefix> ...]   the fault suite (test/faults), which `npm test`
//        leaves out; it ends with the table of every fault's figures (see test/faults/support/fault-table.ts).
//        It runs on a private RabbitMQ and Redis that it starts and stops (scripts/fault-engines.mjs,
//        test/faults/support/suite-engines.ts).
// Environment: TEST_CONCURRENCY (files in parallel, default 1), TEST_TIMEOUT_MS (per test, default
// 600000; 1500000 in the fault suite).
// Files named *.real-nova.test.ts or *.real-keystone.test.ts need the real-Nova harness: it is
// started (installed first if needed) before the run and stopped after it, or reused when one is
// already running in RN_STATE (see scripts/real-nova-harness.mjs).
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { startFaultEngines } from './fault-engines.mjs';
import { ensureRealNova } from './real-nova-harness.mjs';
import { ensureTestPrerequisites } from './test-prerequisites.mjs';

const root = resolve(import.meta.dirname, '..');
const sourceOptions = '--import tsx --conditions=@lifeguard/source';
process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} ${sourceOptions}`.trim();

const arguments_ = process.argv.slice(2);
const faultSuite = arguments_[0] === '--faults';
const faultDirectory = join(root, 'test', 'faults');
const skipDirectories = new Set(['node_modules', 'dist', '.turbo', '.git', 'fixtures']);
const files = [];
const walk = (directory) => {
  for (const name of readdirSync(directory)) {
    if (skipDirectories.has(name)) continue;
    const path = join(directory, name);
    // The fault suite runs only under `npm run test:faults`, and only it runs there.
    if (!faultSuite && path === faultDirectory) continue;
    if (statSync(path).isDirectory()) walk(path);
    else if (name.endsWith('.test.ts')) files.push(path);
  }
};
if (faultSuite) walk(faultDirectory);
else for (const top of ['packages', 'test']) if (existsSync(join(root, top))) walk(join(root, top));
files.sort();

const filters = arguments_.slice(faultSuite ? 1 : 0).map((argument) => relative(root, resolve(argument)));
const selected = filters.length
  ? files.filter((file) => filters.some((filter) => relative(root, file).startsWith(filter)))
  : files;
if (selected.length === 0) {
  console.error(`no test files match ${filters.join(', ')}`);
  process.exit(1);
}

// The fault suite needs no shared broker: it starts its own below.
const problems = await ensureTestPrerequisites({ sharedBrokers: !faultSuite });
if (problems.length > 0) {
  for (const problem of problems) console.error(`test prerequisites: ${problem}`);
  process.exit(1);
}

const harnessFile = /\.real-(nova|keystone)\.test\.ts$/;
const harness = selected.some((file) => harnessFile.test(file))
  ? await ensureRealNova(root, { keystone: selected.some((file) => file.endsWith('.real-keystone.test.ts')) })
  : null;

// The fault suite runs on a RabbitMQ and a Redis of its own (other loopback ports, own data folders),
// which its tests may kill, restart and fill; they are stopped after the run, also on failure.
const stopFaultEngines = faultSuite ? startFaultEngines(root) : null;

// Each fault test appends its row of figures to this file; the table is printed after the run.
const faultResultsDirectory = faultSuite ? mkdtempSync(join(tmpdir(), 'lifeguard-faults-')) : null;
const faultTable = faultSuite ? await import('../test/faults/support/fault-table-print.mjs') : null;
if (faultResultsDirectory) {
  process.env.LIFEGUARD_FAULT_RESULTS_FILE = join(faultResultsDirectory, 'rows.jsonl');
}

let passed = 0;
let failed = 0;
let skipped = 0;
const stream = run({
  files: selected,
  concurrency: Number(process.env.TEST_CONCURRENCY ?? 1),
  // A fault test runs a whole stack through a fault and its recovery: it gets 25 minutes.
  timeout: Number(process.env.TEST_TIMEOUT_MS ?? (faultSuite ? 1_500_000 : 600_000)),
  // A file whose tests finished but left a socket open must not hold the whole run.
  forceExit: true,
});
stream.on('test:pass', (event) => {
  if (event.details.type === 'suite') return;
  if (event.skip || event.todo) skipped++;
  else passed++;
});
stream.on('test:fail', (event) => {
  if (event.details.type === 'suite') return;
  failed++;
});
const output = stream.compose(spec);
output.pipe(process.stdout, { end: false });
output.on('end', async () => {
  await harness?.stop();
  stopFaultEngines?.();
  if (faultTable && faultResultsDirectory) {
    process.stdout.write(`\n${faultTable.renderFaultTable(process.env.LIFEGUARD_FAULT_RESULTS_FILE)}\n`);
    rmSync(faultResultsDirectory, { recursive: true, force: true });
  }
  process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  process.exitCode = failed > 0 || passed === 0 ? 1 : 0;
});
