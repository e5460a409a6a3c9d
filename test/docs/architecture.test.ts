// docs/architecture.md maps every rule to the file that decides it and the tests that prove it; these
// tests keep the map from rotting: every path it names exists, every rule of the two specs and every
// safety rule has a row, and every row names at least one test.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const root = join(import.meta.dirname, '..', '..');
const architecture = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');

/** Table rows of the map: lines starting with `|`, without the header and separator rows. */
const rows = architecture
  .split('\n')
  .filter((line) => line.startsWith('|') && !/^\|\s*-/.test(line) && !/^\|\s*rule\s*\|/.test(line));

describe('docs/architecture.md', () => {
  it('names only paths that exist in the repository', () => {
    const paths = [...architecture.matchAll(/`((?:packages|test|bench|scripts|docs)\/[^`\s]+)`/g)].map(
      (match) => match[1]!,
    );
    assert.ok(paths.length > 100, `found ${paths.length} paths`);
    const missing = [...new Set(paths)].filter((path) => !existsSync(join(root, path)));
    assert.deepEqual(missing, [], 'update docs/architecture.md where a file moved');
  });

  it('has a row for every rule of the two specs and every safety rule', () => {
    const rules = [
      'POLL',
      'DELTA',
      'THRESHOLD',
      'evacuable tags',
      'DISABLED',
      'kdump',
      'SMART_EVACUATION',
      'ORCHESTRATED_RESTART',
      'reserved hosts',
      'LEAVE_DISABLED',
      'FORCE_ENABLE',
      'DHCP block rule',
      'L2 block rule',
      ...[1, 2, 3, 4, 5, 6, 7].map((rule) => `safety-rules.md#rule-${rule}-`),
    ];
    const missing = rules.filter((rule) => !rows.some((row) => row.split('|')[1]!.includes(rule)));
    assert.deepEqual(missing, []);
  });

  it('names at least one test for every rule', () => {
    assert.ok(rows.length > 40, `found ${rows.length} rows`);
    const untested = rows
      .filter((row) => !/`[^`]+\.test\.ts`/.test(row))
      .map((row) => row.split('|')[1]!.trim());
    assert.deepEqual(untested, []);
  });
});
