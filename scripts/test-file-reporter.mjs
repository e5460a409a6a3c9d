// A node:test reporter for scripts/run-tests.mjs: appends one JSON line per finished test (suites
// left out), its outcome and name, to the file named by LIFEGUARD_TEST_OUTCOMES_FILE. The lines are
// written at once (appendFileSync), not through a reporter destination: --test-force-exit ends the
// process before a destination stream is flushed. It yields nothing itself.
import { appendFileSync } from 'node:fs';

export default async function* testOutcomes(source) {
  const file = process.env.LIFEGUARD_TEST_OUTCOMES_FILE;
  for await (const event of source) {
    if (!file || (event.type !== 'test:pass' && event.type !== 'test:fail')) continue;
    if (event.data.details?.type === 'suite') continue;
    // A todo test that fails is not a failure (as node:test counts it).
    const outcome =
      event.data.skip || event.data.todo ? 'skip' : event.type === 'test:fail' ? 'fail' : 'pass';
    appendFileSync(file, `${JSON.stringify({ outcome, name: event.data.name })}\n`);
  }
  yield* [];
}
