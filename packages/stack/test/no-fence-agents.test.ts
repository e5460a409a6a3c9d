import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { waitFor } from '@lifeguard/testing';
import { parse } from 'yaml';
import { PACKAGE_REPOSITORY_ROOT } from '../src/index.ts';
import { processesWithEnvironment, stackBedsForFile } from './support/stack-bed.ts';

const LAUNCHER = join('packages', 'stack', 'dist', 'main.js');
const CLI = join('packages', 'cli', 'bin', 'lifeguard.js');

/** Runs a process to its end and returns its exit status and output. */
function run(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: PACKAGE_REPOSITORY_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The variables of the stack's `env` file (`export NAME='value'` lines). */
function sourcedEnvironment(path: string): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const match = /^export ([A-Z_]+)='(.*)'$/.exec(line);
    if (match) variables[match[1]!] = match[2]!.replaceAll(`'\\''`, "'");
  }
  return variables;
}

const launchers: ChildProcess[] = [];
const emptyDirectories: string[] = [];
// Registered before the beds' hook, so every launcher is stopped before the beds close.
after(() => {
  for (const launcher of launchers) if (launcher.exitCode === null) launcher.kill('SIGKILL');
  for (const directory of emptyDirectories) rmSync(directory, { recursive: true, force: true });
});
const bed = stackBedsForFile(async (each) => {
  await waitFor(
    'the stack processes to end',
    () => processesWithEnvironment('LIFEGUARD_REDIS_KEY_PREFIX', each.keyPrefix).length === 0,
    30_000,
  );
});

describe('npm start on a machine without fence-agents', () => {
  it('says once that the built-in Redfish driver fences the demo hosts, and a killed demo host is fenced, evacuated and re-enabled', async () => {
    const test = await bed('no-fence-agents');
    // No fence agent anywhere: an empty agent directory, and a PATH holding nothing but node.
    const agents = mkdtempSync(join(tmpdir(), 'lifeguard-no-agents-'));
    const path = mkdtempSync(join(tmpdir(), 'lifeguard-path-'));
    emptyDirectories.push(agents, path);
    symlinkSync(process.execPath, join(path, 'node'));
    const environment = { LIFEGUARD_FENCE_AGENTS_DIRECTORY: agents, PATH: path };
    const launcher = spawn(process.execPath, [LAUNCHER], {
      cwd: PACKAGE_REPOSITORY_ROOT,
      env: test.launcherEnvironment(environment),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    launchers.push(launcher);
    let output = '';
    launcher.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    launcher.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => launcher.on('close', resolve));
    const manifest = join(test.stateDirectory, 'stack.json');
    await Promise.race([
      waitFor('the stack to be ready (stack.json)', () => existsSync(manifest), 120_000, 200),
      exited.then((code) => {
        if (!existsSync(manifest))
          throw new Error(`the launcher exited (${code}) before it was ready:\n${output}`);
      }),
    ]);

    const said = output.match(/fenced by lifeguard's built-in Redfish driver/g) ?? [];
    assert.equal(said.length, 1, `the driver is named once at start-up:\n${output}`);
    assert.ok(
      output.includes(`fence_redfish is used instead when installed at ${join(agents, 'fence_redfish')}`),
    );
    assert.doesNotMatch(output, /is not installed or not executable/);
    const fencing = parse(readFileSync(join(test.stateDirectory, 'fencing.yaml'), 'utf8')).FencingConfig;
    assert.deepEqual(
      [...new Set(Object.values(fencing).map((entry) => (entry as { agent: string }).agent))],
      ['redfish'],
    );

    const cli = await run(process.execPath, [CLI, 'sim', 'kill-host', 'compute-03', '--watch', '150'], {
      ...test.launcherEnvironment(environment),
      ...sourcedEnvironment(join(test.stateDirectory, 'env')),
    });
    assert.equal(cli.code, 0, `${cli.stdout}\n${cli.stderr}`);
    assert.match(cli.stdout, /host\.fenced +proof=power-off-confirmed method=redfish/);
    assert.match(cli.stdout, /host\.evacuated /);
    assert.match(cli.stdout, /host\.reenabled /);

    const simUrl = sourcedEnvironment(join(test.stateDirectory, 'env')).LIFEGUARD_CLOUD_SIM_URL;
    const state = (await (await fetch(`${simUrl}/_sim/state`)).json()) as {
      hosts: Array<Record<string, unknown>>;
    };
    const compute03 = state.hosts.find((each) => each.host === 'compute-03');
    assert.equal(compute03?.status, 'enabled', JSON.stringify(compute03));
    assert.equal(compute03?.forcedDown, false);
    launcher.kill('SIGTERM');
    assert.equal(await exited, 0, output.slice(-2000));
  });
});
