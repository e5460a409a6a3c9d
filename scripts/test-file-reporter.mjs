// A node:test reporter for scripts/run-tests.mjs: appends one JSON line per finished test (suites
// left out), its outcome and name, and for a failure its error in a few lines (which the run's
// summary repeats, so a log that keeps only its end still says why), to the file named by
// LIFEGUARD_TEST_OUTCOMES_FILE; and after each top-level test or suite a line `{ "cpuSeconds": N }`:
// the CPU the file's process and the processes it started (and saw end) have used so far. The lines
// are written at once (appendFileSync), not through a reporter destination: --test-force-exit ends
// the process before a destination stream is flushed. It yields nothing itself.
import { appendFileSync, readFileSync } from 'node:fs';

/** utime + stime + cutime + cstime of this process, in seconds (Linux; null elsewhere). */
function cpuSeconds() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[11..14] are utime, stime, cutime, cstime in clock ticks (100 per second on Linux).
    const ticks = fields.slice(11, 15).reduce((sum, field) => sum + Number(field), 0);
    return ticks / 100;
  } catch {
    return null;
  }
}

/** A failed test's error in a few lines (node:test wraps the thrown error in `cause`). */
function failureMessage(error) {
  const thrown = error?.cause ?? error;
  if (thrown === undefined) return undefined;
  const text = thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : String(thrown);
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(0, 6)
    .join('\n')
    .slice(0, 800);
}

export default async function* testOutcomes(source) {
  const file = process.env.LIFEGUARD_TEST_OUTCOMES_FILE;
  for await (const event of source) {
    if (!file || (event.type !== 'test:pass' && event.type !== 'test:fail')) continue;
    if (event.data.nesting === 0) {
      const cpu = cpuSeconds();
      if (cpu !== null) appendFileSync(file, `${JSON.stringify({ cpuSeconds: cpu })}\n`);
    }
    if (event.data.details?.type === 'suite') continue;
    // A todo test that fails is not a failure (as node:test counts it).
    const outcome =
      event.data.skip || event.data.todo ? 'skip' : event.type === 'test:fail' ? 'fail' : 'pass';
    const error = outcome === 'fail' ? failureMessage(event.data.details?.error) : undefined;
    appendFileSync(file, `${JSON.stringify({ outcome, name: event.data.name, error })}\n`);
  }
  yield* [];
}
