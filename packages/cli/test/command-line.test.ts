import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, describe, it } from 'node:test';
import type { Command } from '@commander-js/extra-typings';
import { LIFEGUARD_EVENT_TYPES } from '@lifeguard/contracts';
import {
  deleteKeysWithPrefix,
  lifeguardEntryPoint,
  randomKeyPrefix,
  testRedis,
  withoutNodeOptions,
} from '@lifeguard/testing';
import { CliContext, createProgram, processIo } from '../src/index.ts';
import { lifeguard } from './support/cli-harness.ts';

/** Every command that runs something (a command without subcommands), by its full name. */
function leafCommands(
  command: Command<unknown[], Record<string, unknown>>,
  path: string[] = [],
): Map<string, Command<unknown[], Record<string, unknown>>> {
  const found = new Map<string, Command<unknown[], Record<string, unknown>>>();
  for (const sub of command.commands as Command<unknown[], Record<string, unknown>>[]) {
    const name = [...path, sub.name()];
    if (sub.commands.length === 0) found.set(name.join(' '), sub);
    else for (const [key, value] of leafCommands(sub, name)) found.set(key, value);
  }
  return found;
}

describe('the lifeguard command line', () => {
  const prefix = randomKeyPrefix('cli-command-line');
  const redis = testRedis();
  const env = { LIFEGUARD_REDIS_KEY_PREFIX: prefix };
  after(async () => {
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  it('every command accepts --json', () => {
    const program = createProgram(processIo(), () => new CliContext(processIo()));
    const commands = leafCommands(program as unknown as Command<unknown[], Record<string, unknown>>);
    assert.ok(commands.size >= 16, `found ${commands.size} commands`);
    const without = [...commands]
      .filter(([, command]) => !command.options.some((option) => option.long === '--json'))
      .map(([name]) => name);
    assert.deepEqual(without, []);
  });

  it('refuses an empty argument or option value with exit 2, naming it, before connecting to anything', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['blocks', ''], /^lifeguard: argument 'port' must not be empty$/m],
      [['incident', '  '], /^lifeguard: argument 'id' must not be empty$/m],
      [['dlq', 'replay', '--id', ''], /^lifeguard: option '--id <id\.\.\.>' must not be empty$/m],
      [['dlq', 'replay', '--id', 'abc', ''], /^lifeguard: option '--id <id\.\.\.>' must not be empty$/m],
      [['host', 'rehabilitate', ''], /^lifeguard: argument 'host' must not be empty$/m],
      [['host', 'confirm-fenced', '', '--yes'], /^lifeguard: argument 'host' must not be empty$/m],
      [['sim', 'kill-host', ''], /^lifeguard: argument 'host' must not be empty$/m],
      [['sim', 'heal', 'compute1', ''], /^lifeguard: argument 'hosts' must not be empty$/m],
      [['events', '--host', ''], /^lifeguard: option '--host <host>' must not be empty$/m],
      [['sim', 'status', '--sim-url', ''], /^lifeguard: option '--sim-url <url>' must not be empty$/m],
    ];
    // Nothing listens here: a command that tried to connect would fail with exit 1 instead.
    const nowhere = {
      LIFEGUARD_REDIS_URL: 'redis://127.0.0.1:1/0',
      LIFEGUARD_AMQP_URL: 'amqp://127.0.0.1:1',
    };
    for (const [argv, message] of cases) {
      const run = await lifeguard(argv, { ...nowhere, LIFEGUARD_CLOUD_SIM_URL: 'http://127.0.0.1:1' });
      assert.equal(run.code, 2, `${JSON.stringify(argv)}: ${run.stderr}`);
      assert.match(run.stderr, message, JSON.stringify(argv));
      assert.match(run.stderr, /^\(run with --help for usage\)$/m, JSON.stringify(argv));
    }
  });

  it('names an invalid argument and its value in its own words, with the usage hint', async () => {
    const run = await lifeguard(['sim', 'partition', '0'], { LIFEGUARD_CLOUD_SIM_URL: 'http://127.0.0.1:1' });
    assert.equal(run.code, 2);
    assert.match(run.stderr, /^lifeguard: <count> "0": must be a whole number ≥ 1$/m);
    assert.doesNotMatch(run.stderr, /command-argument value/);
    assert.match(run.stderr, /^\(run with --help for usage\)$/m);
  });

  it('events --type takes only the event types lifeguard publishes', async () => {
    assert.ok(LIFEGUARD_EVENT_TYPES.includes('host.down'));
    assert.ok(LIFEGUARD_EVENT_TYPES.includes('admission.blocked'));
    const bogus = await lifeguard(['events', '--type', 'host.down', 'bogus.type'], env);
    assert.equal(bogus.code, 2);
    assert.match(
      bogus.stderr,
      /^lifeguard: option '--type <types\.\.\.>' argument 'bogus\.type' is invalid\. not an event type \(known: .*host\.down.*\)$/m,
    );
    const known = await lifeguard(['events', '--type', 'host.down', 'threshold.exceeded', '--json'], env);
    assert.equal(known.code, 0, known.stderr);
    assert.deepEqual(known.json(), []);
  });

  it('every error starts with "lifeguard: ", usage errors included', async () => {
    const missing = await lifeguard(['incident'], env);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^lifeguard: missing required argument 'id'$/m);
    const unknownOption = await lifeguard(['status', '--no-such-option'], env);
    assert.equal(unknownOption.code, 2);
    assert.match(unknownOption.stderr, /^lifeguard: unknown option '--no-such-option'$/m);
    const unknownCommand = await lifeguard(['no-such-command'], env);
    assert.equal(unknownCommand.code, 2);
    assert.match(unknownCommand.stderr, /^lifeguard: unknown command 'no-such-command'$/m);
    const badLimit = await lifeguard(['incidents', '--limit', '0'], env);
    assert.match(badLimit.stderr, /^lifeguard: option '--limit <count>' argument '0' is invalid\./m);
    for (const run of [missing, unknownOption, unknownCommand, badLimit]) {
      assert.doesNotMatch(run.stderr, /^error:/m);
    }
  });

  it('no command (lifeguard, lifeguard sim, ...) prints the help on standard error and exits 2, as a usage error', async () => {
    for (const argv of [[], ['sim'], ['host'], ['dlq']]) {
      const run = await lifeguard(argv, env);
      assert.equal(run.code, 2, JSON.stringify(argv));
      assert.equal(run.stdout, '', JSON.stringify(argv));
      assert.match(run.stderr, /^Usage: lifeguard /m, JSON.stringify(argv));
    }
    const root = await lifeguard([], env);
    assert.match(root.stderr, /^Exit status: 0 ok, 1 the command failed, 2 wrong usage/m);
    const asked = await lifeguard(['--help'], env);
    assert.equal(asked.code, 0);
    assert.match(asked.stdout, /^Usage: lifeguard /m);
  });

  it('with --json, a failure is also printed as JSON on standard output', async () => {
    const run = await lifeguard(['incident', 'compute-9.20261130T000000Z.beef', '--json'], env);
    assert.equal(run.code, 1);
    assert.deepEqual(run.json(), {
      error: {
        message: 'no incident compute-9.20261130T000000Z.beef',
        hints: ['list incidents with `lifeguard incidents` (closed ones are kept 30 days)'],
        exitStatus: 1,
      },
    });
    assert.match(run.stderr, /^lifeguard: no incident compute-9\.20261130T000000Z\.beef$/m);
    const usage = await lifeguard(['events', '--type', 'bogus.type', '--json'], env);
    assert.equal(usage.code, 2);
    assert.equal(usage.json<{ error: { exitStatus: number } }>().error.exitStatus, 2);
  });

  it('ends quietly with its status when the reader closes the pipe early (lifeguard --help | true)', async () => {
    const child = spawn(process.execPath, [...lifeguardEntryPoint('cli'), '--help'], {
      env: withoutNodeOptions(process.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The reader is gone before the command writes a byte: every write meets EPIPE.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    assert.equal(stderr, '', 'nothing on standard error');
    assert.equal(code, 0);
  });
});
