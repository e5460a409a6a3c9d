import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SimulatedMachine } from '@lifeguard/testing';
import { waitFor } from '@lifeguard/testing';
import type { StackRun } from '../../e2e/support/stack-run.ts';

/** One more process of a worker kind a StackRun runs, started by the test (another "machine"). */
export interface WorkerCopy {
  readonly name: string;
  readonly child: ChildProcess;
  /** Its JSON log records, oldest first. */
  records(): Array<Record<string, unknown>>;
  /** The records whose `msg` starts with `text`. */
  messages(text: string): Array<Record<string, unknown>>;
  /** Waits for a record whose `msg` matches `pattern`; resolves with it. */
  waitForLog(pattern: RegExp, timeoutMilliseconds?: number): Promise<Record<string, unknown>>;
  /** SIGTERM, SIGKILL after `graceMilliseconds` (default 10 s); resolves once it exited. */
  stop(graceMilliseconds?: number): Promise<void>;
}

export interface WorkerCopyOptions {
  /** The instance name (LIFEGUARD_INSTANCE_NAME) and log label. */
  readonly name: string;
  /** Variables over the stack worker's own. */
  readonly environment?: Readonly<Record<string, string>>;
  /**
   * Runs the copy inside this machine's namespace: every 127.0.0.1 in its variables and in its
   * clouds.yaml becomes `reachAt` (the bridge address where the test exposed the services), and its
   * health server listens on the machine's address.
   */
  readonly machine?: { readonly machine: SimulatedMachine; readonly reachAt: string };
}

/** A copy of the clouds.yaml at `path` with every 127.0.0.1 replaced by `address`. */
function cloudsYamlReaching(path: string, address: string): string {
  const directory = mkdtempSync(join(tmpdir(), 'lifeguard-machine-clouds-'));
  const copy = join(directory, 'clouds.yaml');
  writeFileSync(copy, readFileSync(path, 'utf8').replaceAll('127.0.0.1', address), { mode: 0o600 });
  return copy;
}

/**
 * Starts another process of the stack's worker `workerName` (`node-monitor`, `evacuation-worker-2`,
 * ...) with that worker's variables (same brokers, key prefix, cloud, config files) and a name of its
 * own, from the TypeScript sources, optionally inside a simulated machine. Its health server takes a
 * free port. It is the test's to stop (by this handle: its pid).
 */
export function startWorkerCopy(run: StackRun, workerName: string, options: WorkerCopyOptions): WorkerCopy {
  const worker = run.stack.worker(workerName);
  const base = worker.options.env as Record<string, string>;
  let env: Record<string, string> = {
    ...base,
    LIFEGUARD_INSTANCE_NAME: options.name,
    LIFEGUARD_HTTP_PORT: '0',
    ...options.environment,
  };
  let command = worker.options.command;
  let args = [...worker.options.args];
  if (options.machine) {
    const { machine, reachAt } = options.machine;
    env = Object.fromEntries(
      Object.entries(env).map(([key, value]) => [key, value.replaceAll('127.0.0.1', reachAt)]),
    );
    env.LIFEGUARD_HTTP_HOST = machine.address;
    if (base.OS_CLIENT_CONFIG_FILE)
      env.OS_CLIENT_CONFIG_FILE = cloudsYamlReaching(base.OS_CLIENT_CONFIG_FILE, reachAt);
    ({ command, args } = machine.commandInside(command, args));
  }
  const child = spawn(command, args, { cwd: worker.options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const records: Array<Record<string, unknown>> = [];
  const lines: string[] = [];
  let buffer = '';
  const collect = (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let index = buffer.indexOf('\n');
    while (index >= 0) {
      const line = buffer.slice(0, index).trim();
      buffer = buffer.slice(index + 1);
      index = buffer.indexOf('\n');
      lines.push(line);
      if (!line.startsWith('{')) continue;
      try {
        records.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not a log record
      }
    }
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const messages = (text: string) => records.filter((record) => String(record.msg ?? '').startsWith(text));
  return {
    name: options.name,
    child,
    records: () => records,
    messages,
    waitForLog: (pattern, timeoutMilliseconds = 60_000) =>
      waitFor(
        `${options.name}: a log line matching ${pattern}`,
        () => records.find((record) => pattern.test(String(record.msg ?? ''))),
        timeoutMilliseconds,
        100,
      ).catch((error: Error) => {
        throw new Error(`${error.message}; its last lines:\n${lines.slice(-10).join('\n')}`);
      }),
    async stop(graceMilliseconds = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMilliseconds);
      await exited;
      clearTimeout(timer);
    },
  };
}
