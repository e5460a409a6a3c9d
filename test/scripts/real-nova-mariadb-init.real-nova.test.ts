// The real-Nova harness's MariaDB initialisation (rn_init_mariadb in test/harness/real-nova/lib.sh).
// CI starts two harnesses side by side. A MariaDB server starting (the install's bootstrap is one)
// deletes every `#sql...` file in its temporary directory: sharing /tmp, one harness's install
// deleted the other's temporary tables mid-install ("Could not remove temporary table ... error: 2")
// and that harness did not start.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';

const lib = resolve(import.meta.dirname, '../harness/real-nova/lib.sh');

describe('rn_init_mariadb', () => {
  it("initialises a data directory in a temporary directory of its own: another server's temporary tables in the shared one are left alone", () => {
    const root = mkdtempSync(join(tmpdir(), 'lifeguard-mariadb-init-'));
    try {
      const shared = join(root, 'shared-tmp');
      mkdirSync(shared);
      const others = ['#sql-temptable-4511-1-6.MAI', '#sql-temptable-4511-1-6.MAD'];
      for (const name of others) writeFileSync(join(shared, name), '');
      const directory = join(root, 'harness');
      const run = spawnSync(
        'bash',
        ['-c', `. "${lib}" && rn_init_mariadb "$1" "$1/install.log"`, 'init', directory],
        { encoding: 'utf8', env: { ...process.env, TMPDIR: shared, RN_STATE: directory } },
      );
      const log = readFileSync(join(directory, 'install.log'), 'utf8');
      assert.equal(run.status, 0, `the install failed:\n${run.stderr}${log}`);
      assert.deepEqual(
        readdirSync(shared).sort(),
        [...others].sort(),
        'the shared temporary files are untouched',
      );
      assert.ok(readdirSync(join(directory, 'data')).includes('mysql'), 'the system tables were created');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
