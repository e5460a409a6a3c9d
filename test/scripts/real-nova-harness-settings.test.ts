// The settings of a second real-Nova harness beside the first, and what a run says when its harness
// cannot start (scripts/real-nova-harness.mjs).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { ensureRealNova, harnessSettings, MOST_HARNESSES } from '../../scripts/real-nova-harness.mjs';

const script = resolve(import.meta.dirname, '../../scripts/real-nova-harness.mjs');

describe('harnessSettings', () => {
  it('harness 1 is the environment as it is', () => assert.deepEqual(harnessSettings(1, {}), {}));

  it('harness 2: its own state folder and vhost, every port moved by 10000 (below the ephemeral range)', () => {
    assert.deepEqual(harnessSettings(2, { RN_KEYSTONE_NOVA_PORT: '8775' }), {
      RN_STATE: '/tmp/real-nova-2',
      RN_RABBIT_VHOST: 'real-nova-2',
      RN_NOVA_PORT: '18774',
      RN_PLACEMENT_PORT: '18778',
      RN_GLANCE_PORT: '19292',
      RN_NEUTRON_PORT: '19696',
      RN_DB_PORT: '23306',
      RN_KEYSTONE_PORT: '15000',
      RN_KEYSTONE_NOVA_PORT: '18775',
    });
  });

  it("moves the first harness's own settings, reads an empty one as its default, and drops a trailing slash", () => {
    const settings = harnessSettings(2, { RN_STATE: '/srv/nova/', RN_NOVA_PORT: '9774', RN_DB_PORT: '' });
    assert.equal(settings.RN_STATE, '/srv/nova-2');
    assert.equal(settings.RN_NOVA_PORT, '19774');
    assert.equal(settings.RN_DB_PORT, '23306');
  });

  it(`refuses a harness number other than 1 to ${MOST_HARNESSES}`, () => {
    for (const number of [0, 3, 1.5, Number.NaN])
      assert.throws(() => harnessSettings(number, {}), RangeError);
  });

  it('as a command, prints shell exports, and refuses anything else with the usage and exit 64', () => {
    const run = (...args: string[]) => spawnSync(process.execPath, [script, ...args], { encoding: 'utf8' });
    assert.match(run('settings', '2').stdout, /^export RN_STATE='.*-2'$/m);
    assert.equal(run('settings', '1').stdout, '');
    for (const args of [['settings', '3'], ['settings', '2.0'], ['setings', '2'], ['settings']]) {
      const result = run(...args);
      assert.equal(result.status, 64, args.join(' '));
      assert.match(result.stderr, /^usage: real-nova-harness\.mjs settings <harness number, 1 to 2>/);
    }
  });
});

describe('ensureRealNova when the harness cannot start', () => {
  it('names another harness holding the state folder, so that a second test run says why its real-Nova tests fail', async () => {
    const state = mkdtempSync(join(tmpdir(), 'real-nova-held-'));
    // A process of "another run's harness": its working folder is in the state folder.
    const holder = spawn('sleep', ['600'], { cwd: state, stdio: 'ignore' });
    try {
      writeFileSync(join(state, 'pids'), `mysql ${holder.pid}\n`);
      const root = resolve(import.meta.dirname, '../..');
      const result = await ensureRealNova(root, {
        settings: { RN_STATE: state },
        exportValues: false,
        label: 'held-harness-test',
      });
      assert.equal(result.values, null);
      assert.match(result.reason ?? '', new RegExp(`harness already running \\(mysql pid ${holder.pid}\\)`));
      assert.match(result.reason ?? '', new RegExp(`another harness holds ${state} and its ports`));
    } finally {
      holder.kill();
      rmSync(state, { recursive: true, force: true });
      rmSync(`${state}-start.log`, { force: true });
    }
  });
});
