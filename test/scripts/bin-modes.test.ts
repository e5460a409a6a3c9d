// The workspace commands stay executable after a build writes their dist files again
// (scripts/bin-modes.mjs): tsc and turbo's cache restore write 644, which made `lifeguard-host-agent`
// fail with "Permission denied" after a second `npm start`.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { makeBinsExecutable } from '../../scripts/bin-modes.mjs';
import { transpilePackages } from '../../scripts/transpile-packages.mjs';

const repositoryRoot = resolve(import.meta.dirname, '../..');
const made: string[] = [];
after(() => {
  for (const root of made) rmSync(root, { recursive: true, force: true });
});

function checkout(files: Record<string, { text: string; mode?: number }>): string {
  const root = mkdtempSync(join(tmpdir(), 'bin-modes-'));
  made.push(root);
  for (const [path, file] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), file.text);
    chmodSync(join(root, path), file.mode ?? 0o644);
  }
  return root;
}
const modeOf = (path: string) => statSync(path).mode & 0o777;

describe('makeBinsExecutable', () => {
  it('gives every bin target execute bits where it has read bits, and leaves other files alone', () => {
    const root = checkout({
      'packages/agent/package.json': { text: JSON.stringify({ bin: { 'lifeguard-agent': 'dist/main.js' } }) },
      'packages/agent/dist/main.js': { text: '#!/usr/bin/env node\n' },
      'packages/agent/dist/other.js': { text: '' },
      'packages/private/package.json': { text: JSON.stringify({ bin: 'dist/cli.js' }) },
      'packages/private/dist/cli.js': { text: '#!/usr/bin/env node\n', mode: 0o600 },
      'packages/unbuilt/package.json': { text: JSON.stringify({ bin: { unbuilt: 'dist/main.js' } }) },
      'packages/nobin/package.json': { text: '{}' },
    });
    const changed = makeBinsExecutable(root);
    assert.equal(modeOf(join(root, 'packages/agent/dist/main.js')), 0o755);
    assert.equal(
      modeOf(join(root, 'packages/private/dist/cli.js')),
      0o700,
      'no bit given to whom cannot read',
    );
    assert.equal(modeOf(join(root, 'packages/agent/dist/other.js')), 0o644);
    assert.equal(changed.length, 2);
    assert.deepEqual(makeBinsExecutable(root), [], 'a second run changes nothing');
  });

  it("the test run's transpile leaves a package's command executable", () => {
    const root = checkout({
      'tsconfig.json': { text: readFileSync(join(repositoryRoot, 'tsconfig.json'), 'utf8') },
      'packages/agent/package.json': { text: JSON.stringify({ bin: { 'lifeguard-agent': 'dist/main.js' } }) },
      'packages/agent/src/main.ts': { text: "console.log('agent');\n" },
    });
    assert.deepEqual(transpilePackages(root).errors, []);
    assert.equal(modeOf(join(root, 'packages/agent/dist/main.js')), 0o755);
  });

  it('runs after npm run build and in npm start, after their build', () => {
    const manifest = JSON.parse(readFileSync(join(repositoryRoot, 'package.json'), 'utf8'));
    assert.match(manifest.scripts.build, /turbo run build && node scripts\/bin-modes\.mjs$/);
    const start = readFileSync(join(repositoryRoot, 'scripts/start.mjs'), 'utf8');
    assert.ok(start.indexOf('makeBinsExecutable(root);') > start.indexOf("'build',"), 'after the build');
  });
});
