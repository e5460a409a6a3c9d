import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import testOutcomes from '../../scripts/test-file-reporter.mjs';

async function* events(...list: unknown[]) {
  yield* list;
}

it("writes each test's outcome, and a failure's error in a few lines, for the run's summary", async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'reporter-')), 'outcomes.jsonl');
  process.env.LIFEGUARD_TEST_OUTCOMES_FILE = file;
  const thrown = new assert.AssertionError({ message: 'one is not two', actual: 1, expected: 2 });
  for await (const _ of testOutcomes(
    events(
      { type: 'test:pass', data: { name: 'passes', nesting: 1, details: { type: 'test' } } },
      {
        type: 'test:fail',
        data: {
          name: 'fails',
          nesting: 1,
          details: { type: 'test', error: Object.assign(new Error('failed'), { cause: thrown }) },
        },
      },
      { type: 'test:fail', data: { name: 'a suite', nesting: 0, details: { type: 'suite' } } },
    ),
  ));
  const lines = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  assert.deepEqual(lines[0], { outcome: 'pass', name: 'passes' });
  assert.deepEqual(lines[1], { outcome: 'fail', name: 'fails', error: 'AssertionError: one is not two' });
  assert.equal(typeof lines[2].cpuSeconds, 'number', 'the CPU line after a top-level test or suite');
  assert.equal(lines.length, 3, 'a suite is not counted as a test');
});
