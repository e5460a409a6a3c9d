// The Debian packages a real-Nova harness needs, checked whether the runner starts the harness or
// reuses a running one (scripts/real-nova-harness.mjs): removing python3-openstackclient removes
// python3-keystone, and a harness started before keeps running, so a run with *.real-keystone files
// that reuses it must provide Keystone's packages again, or say which are missing.
//
// What Python finds is set by a sitecustomize.py of the test's own (on PYTHONPATH): it finds every
// module the harness asks for except those listed in a file, which it refuses, so the answers do not
// depend on what this machine has installed; mariadbd and jq are stubs on PATH.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  ensureRealNova,
  HARNESS_MODULES,
  KEYSTONE_MODULES,
  missingHarnessPackages,
} from '../../scripts/real-nova-harness.mjs';

const root = resolve(import.meta.dirname, '../..');
const directory = mkdtempSync(join(tmpdir(), 'real-nova-packages-'));
const refusedFile = join(directory, 'refused-modules');
const pythonPath = join(directory, 'python');
const bin = join(directory, 'bin');
const state = join(directory, 'state');
let nova: Server;

const SITECUSTOMIZE = `import importlib.machinery, os, sys
WANTED = set(${JSON.stringify([...Object.keys(HARNESS_MODULES), ...Object.keys(KEYSTONE_MODULES)])})
class Finder:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name not in WANTED:
            return None
        with open(os.environ["REFUSED_MODULES_FILE"]) as listed:
            if name in listed.read().split():
                raise ModuleNotFoundError(name)
        return importlib.machinery.ModuleSpec(name, None)
sys.meta_path.insert(0, Finder)
`;

/** The environment under which Python refuses the modules of `refused` and finds the others. */
function refusing(...refused: string[]): Record<string, string> {
  writeFileSync(refusedFile, refused.join('\n'));
  return {
    PYTHONPATH: pythonPath,
    REFUSED_MODULES_FILE: refusedFile,
    PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    RN_STATE: state,
  };
}

before(async () => {
  mkdirSync(pythonPath);
  writeFileSync(join(pythonPath, 'sitecustomize.py'), SITECUSTOMIZE);
  mkdirSync(bin);
  for (const program of ['mariadbd', 'jq']) {
    writeFileSync(join(bin, program), '#!/bin/sh\n');
    chmodSync(join(bin, program), 0o755);
  }
  // A running harness as the runner finds one: its env.sh and pids, and a Nova answering 200.
  nova = createServer((_request, response) => response.end('{}'));
  await new Promise<void>((done) => nova.listen(0, '127.0.0.1', done));
  const address = nova.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  mkdirSync(state);
  writeFileSync(
    join(state, 'env.sh'),
    `export NOVA_URL=http://127.0.0.1:${port}/compute/v2.1\nexport KEYSTONE_URL=http://127.0.0.1:1/identity/v3\n`,
  );
  writeFileSync(join(state, 'pids'), '');
});

after(async () => {
  await new Promise((done) => nova?.close(done));
  rmSync(directory, { recursive: true, force: true });
});

describe('missingHarnessPackages', () => {
  it('names the Debian package of each module Python cannot find, Keystone’s only for the Keystone part', () => {
    const env = refusing('keystone', 'nova');
    assert.deepEqual(missingHarnessPackages(true, env), ['python3-nova', 'python3-keystone']);
    assert.deepEqual(missingHarnessPackages(false, env), ['python3-nova']);
    assert.deepEqual(missingHarnessPackages(true, refusing()), []);
  });

  it('names mariadb-server and jq when their programs are not on PATH', () => {
    const env = { ...refusing(), PATH: '/nonexistent' };
    assert.deepEqual(missingHarnessPackages(false, env), ['mariadb-server', 'jq']);
  });
});

describe('ensureRealNova reusing a running harness', () => {
  const reuse = (keystone: boolean, settings: Record<string, string>, provision: object) =>
    ensureRealNova(root, { keystone, settings, exportValues: false, label: 'packages-test', ...provision });

  it('for *.real-keystone files without Keystone’s packages, not as root: no harness, and a reason naming the packages and install.sh', async () => {
    const installs: unknown[] = [];
    const result = await reuse(true, refusing('keystone', 'keystonemiddleware'), {
      isRoot: () => false,
      install: async (env: unknown) => installs.push(env) && 0,
    });
    assert.equal(result.values, null);
    assert.match(
      result.reason ?? '',
      /missing \(python3-keystone, python3-keystonemiddleware\) and this is not root/,
    );
    assert.match(result.reason ?? '', /install\.sh with RN_KEYSTONE=1 as root/);
    assert.match(result.reason ?? '', /sudo apt-get install python3-keystone python3-keystonemiddleware/);
    assert.deepEqual(installs, []);
  });

  it('as root, runs install.sh with RN_KEYSTONE=1 and reuses the harness once the packages are there', async () => {
    const installs: Array<Record<string, string | undefined>> = [];
    const result = await reuse(true, refusing('keystone'), {
      isRoot: () => true,
      install: async (env: Record<string, string | undefined>) => {
        installs.push(env);
        writeFileSync(refusedFile, '');
        return 0;
      },
    });
    assert.equal(installs.length, 1);
    assert.equal(installs[0]?.RN_KEYSTONE, '1');
    assert.match(result.values?.NOVA_URL ?? '', /^http:\/\/127\.0\.0\.1:\d+\/compute\/v2\.1$/);
  });

  it('as root, says so when install.sh did not provide them', async () => {
    const result = await reuse(true, refusing('keystone'), { isRoot: () => true, install: async () => 0 });
    assert.equal(result.values, null);
    assert.match(result.reason ?? '', /^install\.sh did not provide python3-keystone; see /);
  });

  it('without *.real-keystone files, does not ask for Keystone’s packages', async () => {
    const result = await reuse(false, refusing('keystone', 'keystonemiddleware'), {
      isRoot: () => false,
      install: async () => assert.fail('nothing to install'),
    });
    assert.ok(result.values, result.reason);
  });
});
