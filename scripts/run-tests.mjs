// Runs every test file of the monorepo with node:test, several files at once, and ends with the line
// "N passed, N failed, N skipped". Test files run from TypeScript source (tsx + the @lifeguard/source
// export condition); the lifeguard programs they start as processes run compiled: the packages are
// compiled first (scripts/transpile-packages.mjs, seconds), unless LIFEGUARD_TEST_PROCESSES=source.
//
// Usage: npm test [-- <path prefix> ...]   e.g. npm test -- packages/contracts test/e2e
//        npm test -- <file> --test-name-pattern "<regular expression>"   tests of one file by name
//        npm run test:faults [-- <path prefix> ...]   the fault suite (test/faults), which `npm test`
//        leaves out; it ends with the table of every fault's figures (see test/faults/support/fault-table.ts).
//        It runs on a private RabbitMQ and Redis that it starts and stops (scripts/fault-engines.mjs,
//        test/faults/support/suite-engines.ts).
// Each file runs in a process of its own; up to TEST_CONCURRENCY files run at once (default 6: most
// files spend their time waiting on workers, brokers and Nova, and with 4 at once a 2-core machine
// stayed 38 % idle, with 6 it is busy; the fault suite 2: its files mostly wait for the faults they
// inject, and the ones that restart or fill the suite's brokers run alone). A file that must not run beside others says so (scripts/test-schedule.mjs); beside the
// real-Nova files, the others run at a lower priority (niceOf there). A file's
// output is printed whole when it ends, with its seconds; after the counts come the 15 slowest
// files, and the closing line "N passed, N failed, N skipped" is the last line.
// Environment: TEST_CONCURRENCY, TEST_TIMEOUT_MS (per test, default 600000; 1500000 in the fault
// suite), TEST_RECORD_SECONDS=1 (write this run's seconds per file to test/file-seconds.json, which
// orders the files of later runs: the longest start first).
// Files named *.real-nova.test.ts or *.real-keystone.test.ts need the real-Nova harness: it is
// started (installed first if needed) before the run and stopped after it, or reused when one is
// already running in RN_STATE (see scripts/real-nova-harness.mjs).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { setPriority, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { startFaultEngines } from './fault-engines.mjs';
import { ensureRealNova, harnessSettings, MOST_HARNESSES } from './real-nova-harness.mjs';
import { ensureTestPrerequisites } from './test-prerequisites.mjs';
import {
  harnessFile,
  nextToStart,
  niceOf,
  offerOrder,
  readPlacement,
  TestFileDeclarationError,
} from './test-schedule.mjs';

const root = resolve(import.meta.dirname, '..');
const sourceOptions = '--import tsx --conditions=@lifeguard/source';
process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} ${sourceOptions}`.trim();

const arguments_ = process.argv.slice(2);
const faultSuite = arguments_[0] === '--faults';
let testNamePatterns;
const paths = [];
const usage = (problem) => {
  console.error(`${problem}\nusage: npm test [-- <path> ... [--test-name-pattern <regular expression>]]`);
  process.exit(1);
};
for (let index = faultSuite ? 1 : 0; index < arguments_.length; index++) {
  const argument = arguments_[index];
  if (argument === '--test-name-pattern' || argument.startsWith('--test-name-pattern=')) {
    const pattern = argument.includes('=') ? argument.slice(argument.indexOf('=') + 1) : arguments_[++index];
    if (pattern === undefined || pattern === '') usage('--test-name-pattern needs a regular expression');
    testNamePatterns = [...(testNamePatterns ?? []), pattern];
  } else if (argument.startsWith('--')) usage(`unknown option ${argument}`);
  else paths.push(argument);
}
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

// A path is a file or a folder, from the folder npm was started in (npm runs this script from the
// repository root); a folder selects every file under it, whole names only.
const startedIn = process.env.INIT_CWD ?? process.cwd();
const filters = paths.map((argument) => relative(root, resolve(startedIn, argument)));
const under = (file, filter) => {
  const path = relative(root, file);
  return path === filter || path.startsWith(`${filter}/`) || filter === '';
};
const unmatched = filters.filter((filter) => !files.some((file) => under(file, filter)));
if (unmatched.length > 0) {
  console.error(`no test files match ${unmatched.join(', ')}`);
  process.exit(1);
}
const selected = filters.length
  ? files.filter((file) => filters.some((filter) => under(file, filter)))
  : files;

const concurrency = Number(process.env.TEST_CONCURRENCY ?? (faultSuite ? 2 : 6));
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error(
    `TEST_CONCURRENCY must be a whole number of files, 1 or more (got "${process.env.TEST_CONCURRENCY}")`,
  );
  process.exit(1);
}
const milliseconds = (name, fallback) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1) {
    console.error(`${name} must be a whole number of milliseconds, 1 or more (got "${process.env[name]}")`);
    process.exit(1);
  }
  return value;
};
// Per test (Node honours --test-timeout outside --test mode from version 22 on), and per file: a
// file still running after TEST_FILE_TIMEOUT_MS is stopped with everything it started, and fails.
const timeout = milliseconds('TEST_TIMEOUT_MS', faultSuite ? 1_500_000 : 600_000);
const fileTimeout = milliseconds('TEST_FILE_TIMEOUT_MS', faultSuite ? 3_600_000 : 1_800_000);

let placed;
try {
  placed = selected.map((path) => ({ path: relative(root, path), ...readPlacement(path) }));
} catch (error) {
  if (!(error instanceof TestFileDeclarationError)) throw error;
  console.error(error.message);
  process.exit(1);
}

// The fault suite needs no shared broker: it starts its own below.
const problems = await ensureTestPrerequisites({ sharedBrokers: !faultSuite });
if (problems.length > 0) {
  for (const problem of problems) console.error(`test prerequisites: ${problem}`);
  process.exit(1);
}

// lifeguard's programs that tests start as processes of their own (workers, the CLI, the launcher)
// run compiled, as users run them, and a compiled worker starts on half the CPU of one tsx compiles:
// their JavaScript is written first (the same as `tsc` writes, without its type check: a few seconds,
// where the checked build took a minute and more and held the harness back), while the harness
// starts. LIFEGUARD_TEST_PROCESSES=source runs them from TypeScript, with nothing written.
const processRun = process.env.LIFEGUARD_TEST_PROCESSES ?? 'dist';
if (processRun !== 'dist' && processRun !== 'source') {
  console.error(`LIFEGUARD_TEST_PROCESSES must be "dist" or "source" (got "${processRun}")`);
  process.exit(1);
}
process.env.LIFEGUARD_TEST_PROCESSES = processRun;
const built = processRun === 'dist' ? buildPackages() : Promise.resolve(true);

// The real-Nova lane: harness 1 is the one the environment names (started here or by .ci/run, or
// reused). A second one (TEST_REAL_NOVA_HARNESSES, 2 by default for npm test) is started beside it (or
// reused) while the other files run, and the lane runs two of its files at once, each on a harness of
// its own (its variables in that file's environment). The lane was the longest path through a run:
// on one harness `npm test` took 943 to 1,009 s from a clean clone, on two 578 s (2026-12-06). The
// fault suite keeps one by default (its three real-Nova files are not its longest path).
const harnessFiles = selected.filter((file) => harnessFile.test(file));
const keystone = harnessFiles.some((file) => file.endsWith('.real-keystone.test.ts'));
const harnessesWanted = Number(process.env.TEST_REAL_NOVA_HARNESSES ?? (faultSuite ? 1 : 2));
if (!Number.isInteger(harnessesWanted) || harnessesWanted < 1 || harnessesWanted > MOST_HARNESSES) {
  console.error(
    `TEST_REAL_NOVA_HARNESSES must be 1 to ${MOST_HARNESSES} (got "${process.env.TEST_REAL_NOVA_HARNESSES}")`,
  );
  process.exit(1);
}
const harnessCount = Math.min(harnessesWanted, harnessFiles.length);
const harnesses = [];
const freeHarnesses = [];
// Set once the files are being started: a harness ready before then is counted at the first start.
let scheduling = false;
const harnessStarts = [];
if (harnessFiles.length > 0) {
  const first = await ensureRealNova(root, { keystone });
  harnesses.push(first);
  freeHarnesses.push(first);
  for (let number = 2; number <= harnessCount; number++) {
    harnessStarts.push(
      ensureRealNova(root, {
        keystone,
        settings: harnessSettings(number),
        exportValues: false,
        label: `real-nova ${number}`,
      }).then((harness) => {
        harnesses.push(harness);
        if (harness.values) {
          freeHarnesses.push(harness);
          if (scheduling) startWhatMay();
        }
      }),
    );
  }
}

// The fault suite runs on a RabbitMQ and a Redis of its own (other loopback ports, own data folders),
// which its tests may kill, restart and fill; they are stopped after the run, also on failure.
const stopFaultEngines = faultSuite ? startFaultEngines(root) : null;

// Each fault test appends its row of figures to this file; the table is printed after the run.
const faultResultsDirectory = faultSuite ? mkdtempSync(join(tmpdir(), 'lifeguard-faults-')) : null;
const faultTable = faultSuite ? await import('../test/faults/support/fault-table-print.mjs') : null;
if (faultResultsDirectory) {
  process.env.LIFEGUARD_FAULT_RESULTS_FILE = join(faultResultsDirectory, 'rows.jsonl');
}

const secondsFile = join(root, 'test', faultSuite ? 'fault-file-seconds.json' : 'file-seconds.json');
const earlierSeconds = existsSync(secondsFile) ? JSON.parse(readFileSync(secondsFile, 'utf8')) : {};

let passed = 0;
let failed = 0;
let skipped = 0;
const failures = [];
const secondsOf = {};
// CPU seconds of each file: its process and the processes it started and saw end.
const cpuSecondsOf = {};
const outcomesDirectory = mkdtempSync(join(tmpdir(), 'lifeguard-test-outcomes-'));
// Each file's process leads a process group of its own (with the workers and servers it starts):
// a signal to the runner (Ctrl-C, SIGTERM) is passed on to every group, and whatever is left is
// killed when the runner exits.
const children = new Set();
const signalGroup = (child, signal) => {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
};
const signalChildren = (signal) => {
  for (const child of children) signalGroup(child, signal);
};
process.on('exit', () => signalChildren('SIGKILL'));
let stopping = false;
const stopRun = (why) => {
  if (stopping) return;
  stopping = true;
  process.stdout.write(`\n${why}: stopping the ${children.size} test file(s) running\n`);
  signalChildren('SIGTERM');
  setTimeout(() => process.exit(130), 5000).unref();
  setInterval(() => {
    if (children.size === 0) process.exit(130);
  }, 100).unref();
};
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => stopRun(signal));
// npm killed by a signal exits without passing it on: a runner left without its parent stops too.
const parentPid = process.ppid;
setInterval(() => {
  if (process.ppid !== parentPid) stopRun('the process that started the tests ended');
}, 1000).unref();
let fileNumber = 0;

/**
 * The packages' JavaScript (scripts/transpile-packages.mjs: TypeScript's emitter, no type check),
 * resolving true once written. On failure its output is printed and it resolves false: the run then
 * ends, after stopping what it started beside it (the harness).
 */
function buildPackages() {
  const started = performance.now();
  const child = spawn(process.execPath, [join(root, 'scripts', 'transpile-packages.mjs')], {
    cwd: root,
    env: { ...process.env, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const chunks = [];
  child.stdout.on('data', (chunk) => chunks.push(chunk));
  child.stderr.on('data', (chunk) => chunks.push(chunk));
  return new Promise((done) => {
    child.on('error', (error) => {
      console.error(`the packages' JavaScript could not be written: ${error.message}`);
      process.exit(1);
    });
    child.on('close', (code) => {
      if (code !== 0) {
        process.stdout.write(Buffer.concat(chunks).toString('utf8'));
        console.error(
          `writing the packages' JavaScript (scripts/transpile-packages.mjs) failed with exit code ${code}: the tests run the compiled packages`,
        );
        done(false);
        return;
      }
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      console.log(`wrote the packages' JavaScript (dist/, scripts/transpile-packages.mjs) in ${seconds} s`);
      done(true);
    });
  });
}

/**
 * Runs one file in a node process of its own (the spec reporter on its output, the outcomes of its
 * tests in a file of their own), on `harness` when given; resolves when its output has been written.
 */
function runFile(file, harness) {
  return new Promise((resolveFile) => {
    const started = performance.now();
    const outcomesFile = join(outcomesDirectory, `${++fileNumber}.jsonl`);
    const child = spawn(
      process.execPath,
      [
        // A file whose tests finished but left a socket open must not hold the whole run.
        '--test-force-exit',
        `--test-timeout=${timeout}`,
        ...(testNamePatterns ?? []).map((pattern) => `--test-name-pattern=${pattern}`),
        '--test-reporter=spec',
        '--test-reporter-destination=stdout',
        `--test-reporter=${join(root, 'scripts', 'test-file-reporter.mjs')}`,
        '--test-reporter-destination=stderr',
        join(root, file.path),
      ],
      {
        cwd: root,
        env: { ...process.env, ...(harness?.values ?? {}), LIFEGUARD_TEST_OUTCOMES_FILE: outcomesFile },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    );
    children.add(child);
    // Set before its node has started anything: the processes the file starts inherit it.
    const nice = niceOf(file, concurrency);
    if (nice !== 0) {
      try {
        setPriority(child.pid, nice);
      } catch {
        // not permitted here: the file runs at the runner's priority
      }
    }
    let timedOut = false;
    const watchdog = setTimeout(() => {
      timedOut = true;
      signalGroup(child, 'SIGTERM');
      setTimeout(() => signalGroup(child, 'SIGKILL'), 10_000).unref();
    }, fileTimeout);
    const chunks = [];
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.stderr.on('data', (chunk) => chunks.push(chunk));
    child.on('close', (code, signal) => {
      clearTimeout(watchdog);
      children.delete(child);
      const seconds = (performance.now() - started) / 1000;
      secondsOf[file.path] = Math.round(seconds * 10) / 10;
      const outcomes = existsSync(outcomesFile)
        ? readFileSync(outcomesFile, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line))
        : [];
      let filePassed = 0;
      let fileFailed = 0;
      for (const outcome of outcomes) {
        if (outcome.cpuSeconds !== undefined) {
          cpuSecondsOf[file.path] = outcome.cpuSeconds;
          continue;
        }
        if (outcome.outcome === 'pass') filePassed++;
        else if (outcome.outcome === 'skip') skipped++;
        else {
          fileFailed++;
          const why = outcome.error ? `\n${outcome.error.replace(/^/gm, '      ')}` : '';
          failures.push(`${file.path}: ${outcome.name}${why}`);
        }
      }
      // A process that failed without a failed test (a crash at load, a hook that threw, a signal).
      if (timedOut) {
        fileFailed++;
        failures.push(`${file.path}: still running after TEST_FILE_TIMEOUT_MS (${fileTimeout} ms); stopped`);
      } else if ((code !== 0 || signal !== null) && fileFailed === 0) {
        fileFailed++;
        failures.push(`${file.path}: the file's process ended with ${signal ?? `exit code ${code}`}`);
      }
      passed += filePassed;
      failed += fileFailed;
      const on = harness && harnesses.length > 1 ? ` (on ${harness.values.RN_STATE})` : '';
      const head = `\n── ${file.path}${on}: ${filePassed} passed, ${fileFailed} failed in ${seconds.toFixed(1)} s\n`;
      process.stdout.write(head + Buffer.concat(chunks).toString('utf8'));
      resolveFile();
    });
  });
}

const startedAt = performance.now();
// One file at a time (TEST_CONCURRENCY=1), the files run in the order of their names; several at
// once, the longest start first.
const waiting = concurrency === 1 ? [...placed] : offerOrder(placed, earlierSeconds);
const running = [];
let resolveAll;
const allDone = new Promise((resolve) => {
  resolveAll = resolve;
});
function startWhatMay() {
  for (;;) {
    // The real-Nova lane is as wide as there are harnesses free or busy with one of its files.
    const laneWidth = {
      'real-nova': Math.max(1, freeHarnesses.length + running.filter((file) => file.harness).length),
    };
    const index = nextToStart(waiting, running, concurrency, laneWidth);
    if (index < 0) break;
    const [file] = waiting.splice(index, 1);
    const harness = harnessFile.test(file.path) ? freeHarnesses.shift() : undefined;
    const entry = { ...file, harness };
    running.push(entry);
    runFile(file, harness).then(() => {
      running.splice(running.indexOf(entry), 1);
      if (harness) freeHarnesses.push(harness);
      if (waiting.length === 0 && running.length === 0) resolveAll();
      else startWhatMay();
    });
  }
}
if (!(await built)) {
  // Not process.exit at once: a harness starting beside the build would be left half-started, and
  // the next run would find its database holding the state folder.
  await Promise.all(harnessStarts);
  await Promise.all(harnesses.map((harness) => harness.stop()));
  stopFaultEngines?.();
  process.exit(1);
}
scheduling = true;
startWhatMay();
await allDone;
const wallSeconds = (performance.now() - startedAt) / 1000;
rmSync(outcomesDirectory, { recursive: true, force: true });

// A harness still starting is waited for, so that it is stopped (if it was started here).
await Promise.all(harnessStarts);
await Promise.all(harnesses.map((harness) => harness.stop()));
stopFaultEngines?.();
if (faultTable && faultResultsDirectory) {
  process.stdout.write(`\n${faultTable.renderFaultTable(process.env.LIFEGUARD_FAULT_RESULTS_FILE)}\n`);
  rmSync(faultResultsDirectory, { recursive: true, force: true });
}
// Seconds of whole files only: a run cut down by a name pattern would make them look short.
if (process.env.TEST_RECORD_SECONDS === '1' && !testNamePatterns) {
  const merged = { ...earlierSeconds, ...secondsOf };
  const sorted = Object.fromEntries(
    Object.entries(merged)
      .filter(([path]) => existsSync(join(root, path)))
      .sort(([a], [b]) => a.localeCompare(b)),
  );
  writeFileSync(secondsFile, `${JSON.stringify(sorted, null, 2)}\n`);
}
const slowest = Object.entries(secondsOf)
  .sort(([, a], [, b]) => b - a)
  .slice(0, 15);
process.stdout.write(
  `\n${placed.length} file(s) in ${wallSeconds.toFixed(0)} s, up to ${concurrency} at once; the slowest:\n`,
);
for (const [path, seconds] of slowest) {
  const cpu = cpuSecondsOf[path] === undefined ? '' : `${cpuSecondsOf[path].toFixed(1).padStart(7)} s CPU`;
  process.stdout.write(`${seconds.toFixed(1).padStart(8)} s ${cpu}  ${path}\n`);
}
const hungriest = Object.entries(cpuSecondsOf)
  .sort(([, a], [, b]) => b - a)
  .slice(0, 15);
if (hungriest.length > 0) {
  const allCpu = Object.values(cpuSecondsOf).reduce((sum, each) => sum + each, 0);
  process.stdout.write(
    `\nthe files that used the most CPU (their processes and those they started; ${allCpu.toFixed(0)} s in all):\n`,
  );
  for (const [path, cpu] of hungriest) {
    process.stdout.write(
      `${cpu.toFixed(1).padStart(8)} s CPU ${(secondsOf[path] ?? 0).toFixed(1).padStart(7)} s  ${path}\n`,
    );
  }
}
if (failures.length > 0) {
  process.stdout.write('\nfailed:\n');
  for (const failure of failures) process.stdout.write(`  ${failure}\n`);
}
process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
process.exitCode = failed > 0 || passed === 0 ? 1 : 0;
