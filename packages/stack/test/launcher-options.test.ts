import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { lifeguardEntryPoint } from '@lifeguard/testing';
import { ignoredFileVariables, ignoredWorkerVariables } from '../src/ignored-variables.ts';
import { PACKAGE_REPOSITORY_ROOT } from '../src/index.ts';

/**
 * The launcher (see lifeguardEntryPoint) with only `env` (and PATH/HOME) in its environment; nothing
 * listens at the brokers' addresses, so a launcher that got past its options would exit 69, not 78.
 */
function launch(
  args: ReadonlyArray<string>,
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [...lifeguardEntryPoint('stack'), ...args],
      {
        cwd: PACKAGE_REPOSITORY_ROOT,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          LIFEGUARD_AMQP_URL: 'amqp://127.0.0.1:1',
          LIFEGUARD_REDIS_URL: 'redis://127.0.0.1:1/0',
          ...env,
        },
        timeout: 60_000,
      },
      (error, stdout, stderr) => done({ code: error ? (error.code as number) : 0, stdout, stderr }),
    );
  });
}

describe('the launcher (npm start): invalid options', () => {
  it('exits 78 naming the option or the LIFEGUARD_STACK_* variable, for every kind of bad value', async () => {
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [
        ['--hosts', 'abc'],
        {},
        /^lifeguard cannot start: option '--hosts <count>' argument 'abc' is invalid\. a positive whole number is expected$/m,
      ],
      [
        ['--hosts', '0'],
        {},
        /^lifeguard cannot start: option '--hosts <count>' argument '0' is invalid\. a positive whole number is expected$/m,
      ],
      [
        [],
        { LIFEGUARD_STACK_HOSTS: '-4' },
        /^lifeguard cannot start: option '--hosts <count>' value '-4' from env 'LIFEGUARD_STACK_HOSTS' is invalid\. a positive whole number is expected$/m,
      ],
      [
        [],
        { LIFEGUARD_STACK_EVACUATION_WORKERS: '1.5' },
        /value '1\.5' from env 'LIFEGUARD_STACK_EVACUATION_WORKERS' is invalid\. a positive whole number is expected$/m,
      ],
      [
        ['--evacuation-workers', '40'],
        {},
        /option '--evacuation-workers <count>' argument '40' is invalid\. a positive whole number of at most 32 is expected$/m,
      ],
      [
        ['--cloud-sim-port', '70000'],
        {},
        /option '--cloud-sim-port <port>' argument '70000' is invalid\. a port number from 0 to 65535 is expected$/m,
      ],
      [
        ['--restart-attempts', '-1'],
        {},
        /'--restart-attempts <count>' argument '-1' is invalid\. a whole number \(0 or more\) is expected$/m,
      ],
      [
        ['--log-format', 'xml'],
        {},
        /option '--log-format <format>' argument 'xml' is invalid\. Allowed choices are/m,
      ],
      [['--hosts'], {}, /^lifeguard cannot start: option '--hosts <count>' argument missing$/m],
      [['--no-such-option'], {}, /^lifeguard cannot start: unknown option '--no-such-option'$/m],
    ];
    for (const [args, env, message] of cases) {
      const run = await launch(args, env);
      const what = `${JSON.stringify(args)} ${JSON.stringify(env)}`;
      assert.equal(run.code, 78, `${what}: ${run.stderr}`);
      assert.match(run.stderr, message, what);
      assert.doesNotMatch(run.stderr, /^error: /m, what);
    }
  });

  it('--help exits 0 and states the exit statuses', async () => {
    const run = await launch(['--help']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /Exit status: 78 invalid configuration/);
  });

  it('against a real cloud, a fencing.yaml that is not there exits 78 naming FENCING_CONFIG_PATH', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'lifeguard-launcher-options-'));
    const config = join(directory, 'config.yaml');
    writeFileSync(config, 'config: {}\n');
    const run = await launch([], {
      OS_CLOUD: 'somewhere',
      INSTANCEHA_CONFIG_PATH: config,
      FENCING_CONFIG_PATH: join(directory, 'none.yaml'),
    });
    assert.equal(run.code, 78, run.stderr);
    assert.match(
      run.stderr,
      /^lifeguard cannot start: fencing\.yaml \(FENCING_CONFIG_PATH\): .*\/none\.yaml does not exist$/m,
    );
  });

  it('on the simulated cloud, names an exported INSTANCEHA_CONFIG_PATH, FENCING_CONFIG_PATH, LIFEGUARD_HTTP_PORT or LIFEGUARD_PROVISIONING_ROLE it does not use', async () => {
    const run = await launch([], {
      INSTANCEHA_CONFIG_PATH: '/etc/instanceha/config.yaml',
      FENCING_CONFIG_PATH: '/etc/instanceha/fencing.yaml',
      LIFEGUARD_HTTP_PORT: 'abc',
      LIFEGUARD_PROVISIONING_ROLE: 'both',
    });
    assert.match(
      run.stderr,
      /^note: LIFEGUARD_HTTP_PORT=abc is not used: npm start gives each worker its own port \(choose them with --http-port-base <port>\)$/m,
    );
    assert.match(
      run.stderr,
      /^note: LIFEGUARD_PROVISIONING_ROLE=both is not used: npm start runs the provisioning service/m,
    );
    assert.equal(run.code, 69, run.stderr);
    assert.match(
      run.stderr,
      /^note: INSTANCEHA_CONFIG_PATH=\/etc\/instanceha\/config\.yaml is not used: without OS_CLOUD, npm start runs the simulated demo cloud with a config\.yaml of its own/m,
    );
    assert.match(run.stderr, /^note: FENCING_CONFIG_PATH=\/etc\/instanceha\/fencing\.yaml is not used/m);
  });
});

describe('ignoredFileVariables', () => {
  it('names each configuration-file variable set for a simulated stack, and none for a real cloud or when unset', () => {
    const environment = { INSTANCEHA_CONFIG_PATH: '/a/config.yaml', FENCING_CONFIG_PATH: '' };
    const lines = ignoredFileVariables(environment, true);
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /^INSTANCEHA_CONFIG_PATH=\/a\/config\.yaml is not used/);
    assert.deepEqual(ignoredFileVariables(environment, false), []);
    assert.deepEqual(ignoredFileVariables({}, true), []);
  });
});

describe('ignoredWorkerVariables', () => {
  it('names each per-worker variable npm start sets itself, with its value, and nothing when none is set', () => {
    const lines = ignoredWorkerVariables({
      LIFEGUARD_HTTP_PORT: '9000',
      LIFEGUARD_INSTANCE_NAME: 'a',
      PATH: '/bin',
    });
    assert.deepEqual(lines, [
      'LIFEGUARD_HTTP_PORT=9000 is not used: npm start gives each worker its own port (choose them with --http-port-base <port>)',
      'LIFEGUARD_INSTANCE_NAME=a is not used: npm start names each worker <hostname>:<worker>',
    ]);
    assert.deepEqual(ignoredWorkerVariables({ PATH: '/bin' }), []);
  });
});
