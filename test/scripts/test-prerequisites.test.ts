// The test runner's prerequisite check (scripts/test-prerequisites.mjs) on a machine without Debian's
// package tools: it says that it cannot tell, and the one command that installs what the tests need,
// instead of calling every package missing.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';

const script = resolve(import.meta.dirname, '../../scripts/test-prerequisites.mjs');

describe('test prerequisites', () => {
  it('without dpkg-query on PATH, says it cannot tell what is installed and gives the install command', () => {
    const bin = mkdtempSync(join(tmpdir(), 'lifeguard-bare-bin-'));
    try {
      symlinkSync(process.execPath, join(bin, 'node'));
      const result = spawnSync(
        join(bin, 'node'),
        [
          '--input-type=module',
          '-e',
          `const m = await import(${JSON.stringify(script)}); console.log(JSON.stringify(await m.ensureTestPrerequisites({ sharedBrokers: false })));`,
        ],
        { env: { PATH: bin, HOME: bin }, encoding: 'utf8' },
      );
      assert.equal(result.status, 0, result.stderr);
      const problems = JSON.parse(result.stdout.trim().split('\n').at(-1)!) as string[];
      assert.equal(problems.length, 1, problems.join('\n'));
      assert.match(
        problems[0]!,
        /cannot tell which Debian packages are installed \(dpkg-query is not on PATH\)/,
      );
      assert.match(
        problems[0]!,
        /apt-get install python3-oslo\.messaging .*chromium libvirt-clients libvirt-daemon python3-masakari python3-masakariclient python3-openstackclient masakari-process-monitor masakari-instance-monitor python3-libvirt$/,
      );
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });
});
