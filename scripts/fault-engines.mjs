// The fault suite's private RabbitMQ and Redis, for scripts/run-tests.mjs --faults: started before the
// first test file, stopped (by the process group ids in their state file) after the run, on failure,
// on SIGINT/SIGTERM and at exit. See test/faults/support/suite-engines.ts for what runs and the
// environment variables the tests get.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Starts the engines (test/faults/support/suite-engines-command.ts) in a fresh folder under the
 * system's tmp dir, sets LIFEGUARD_FAULT_ENGINES_FILE and the test variables (LIFEGUARD_TEST_AMQP_PORT, ...) in this
 * process's environment (inherited by every test file), and returns a function that stops them.
 * The stop also runs at exit and on SIGINT/SIGTERM; it is safe to call more than once.
 * @throws Error when they do not start (the command's message is included)
 */
export function startFaultEngines(root) {
  const directory = mkdtempSync(join(tmpdir(), 'lifeguard-fault-engines-'));
  const stateFile = join(directory, 'engines.json');
  process.env.LIFEGUARD_FAULT_ENGINES_FILE = stateFile;
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    if (existsSync(stateFile)) {
      const engines = JSON.parse(readFileSync(stateFile, 'utf8'));
      for (const pid of [engines.rabbitmq?.pid, engines.redis?.pid]) {
        if (!pid) continue;
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
    try {
      // The engines may still be writing for a moment after SIGKILL.
      rmSync(directory, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    } catch (error) {
      process.stderr.write(`fault suite: could not remove ${directory}: ${error.message}\n`);
    }
  };
  process.once('exit', stop);
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      stop();
      process.exit(130);
    });
  }
  process.stdout.write('fault suite: starting a private RabbitMQ and Redis ...\n');
  let output;
  try {
    output = execFileSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '--conditions=@lifeguard/source',
        join(root, 'test/faults/support/suite-engines-command.ts'),
        directory,
      ],
      {
        cwd: root,
        env: { ...process.env, NODE_OPTIONS: '' },
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
        timeout: 900_000,
      },
    );
  } catch (error) {
    stop();
    throw new Error(`the fault suite's engines did not start: ${error.message}`);
  }
  const environment = JSON.parse(output.trim().split('\n').pop());
  Object.assign(process.env, environment);
  process.stdout.write(
    `fault suite: RabbitMQ ${environment.LIFEGUARD_TEST_RABBITMQ_NODE} on 127.0.0.1:${environment.LIFEGUARD_TEST_AMQP_PORT}, Redis ${environment.LIFEGUARD_TEST_REDIS_URL} (data in ${directory})\n`,
  );
  return stop;
}
