import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Stack } from './stack.ts';
import { PACKAGE_REPOSITORY_ROOT } from './stack-options.ts';
import { WorkerRestarts } from './worker-restarts.ts';

/** The console's port when LIFEGUARD_STACK_CONSOLE_PORT is not set. */
export const DEFAULT_CONSOLE_PORT = 9430;
/** The console's name in the launcher's log lines (it is not a worker kind: `lifeguard status` does not list it). */
export const CONSOLE_NAME = 'console';

/** The operator web console the launcher runs next to the workers: its URL, and how to stop it. */
export interface ConsoleProcess {
  readonly url: string;
  /** The running console's process id, or null while it is down. */
  readonly pid: number | null;
  stop(): Promise<void>;
}

/** The console's environment: the stack as the CLI sees it, 127.0.0.1 and `port`, the operator token if set. */
function consoleEnvironment(stack: Stack, port: number): NodeJS.ProcessEnv {
  const watch = pathToFileURL(
    join(PACKAGE_REPOSITORY_ROOT, 'packages', 'stack', 'dist', 'parent-watch.js'),
  ).href;
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_OPTIONS: `--import=${JSON.stringify(watch)}`,
    LIFEGUARD_STACK_PARENT_PID: String(process.pid),
    ...stack.clientEnvironment(),
    LIFEGUARD_HTTP_HOST: '127.0.0.1',
    LIFEGUARD_HTTP_PORT: String(port),
    LIFEGUARD_LOG_LEVEL: 'warn',
    ...(process.env.LIFEGUARD_CONSOLE_OPERATOR_TOKEN
      ? { LIFEGUARD_CONSOLE_OPERATOR_TOKEN: process.env.LIFEGUARD_CONSOLE_OPERATOR_TOKEN }
      : {}),
  };
}

/**
 * The console's process under the launcher's restart policy (the workers' WorkerRestarts, with the
 * stack's `restartWorkers`): an unexpected exit is logged as `console was ended by SIGKILL; restarting
 * it in 1 s (restart 1 of 5)`, then `console restarted (pid <pid>) and ready`.
 */
class SupervisedConsole implements ConsoleProcess {
  readonly name = CONSOLE_NAME;
  startedAt: number | null = null;
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private supervised = false;
  private stopping = false;
  private readonly restarts: WorkerRestarts<SupervisedConsole>;

  constructor(
    private readonly stack: Stack,
    private readonly port: number,
    private readonly timeoutSeconds: number,
  ) {
    this.restarts = new WorkerRestarts(
      stack.options.restartWorkers,
      () => this.restartAfterExit(),
      stack.log,
    );
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/`;
  }

  get pid(): number | null {
    return this.child?.exitCode === null && this.child.signalCode === null ? (this.child.pid ?? null) : null;
  }

  /**
   * Starts the console and resolves once its /healthz answers (at most `timeoutSeconds`); from then on
   * an unexpected exit goes to the restart policy.
   * @throws Error with the console's last output lines when it exits or does not answer in time
   */
  async start(): Promise<void> {
    const child = spawn(process.execPath, ['packages/console/dist/main.js'], {
      cwd: PACKAGE_REPOSITORY_ROOT,
      env: consoleEnvironment(this.stack, this.port),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.startedAt = Date.now();
    let output = '';
    const keep = (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-2000));
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.exited = new Promise<void>((resolve) =>
      child.once('exit', (code, signal) => {
        resolve();
        if (this.supervised && !this.stopping) this.restarts.workerEnded(this, { code, signal });
      }),
    );
    const deadline = Date.now() + this.timeoutSeconds * 1000;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(
          `the console exited (status ${child.exitCode ?? child.signalCode}): ${output.trim()}`,
        );
      const healthy = await fetch(`${this.url}healthz`, { signal: AbortSignal.timeout(1000) }).then(
        (response) => response.ok,
        () => false,
      );
      if (healthy) break;
      if (Date.now() > deadline) {
        child.kill('SIGTERM');
        throw new Error(
          `the console did not answer on ${this.url} within ${this.timeoutSeconds} s: ${output.trim()}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    this.supervised = true;
  }

  private async restartAfterExit(): Promise<void> {
    if (this.stopping || this.pid !== null) return;
    try {
      await this.start();
      this.stack.log('info', `${this.name} restarted (pid ${this.pid}) and ready`);
    } catch (error) {
      // An exit during start-up is handled as any unexpected exit (the next attempt, or giving up).
      if (this.pid !== null && !this.stopping)
        this.stack.log(
          'warn',
          `${this.name} restarted (pid ${this.pid}) but not ready: ${(error as Error).message}`,
        );
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.restarts.cancel();
    if (this.pid !== null) this.child?.kill('SIGTERM');
    await this.exited;
  }
}

/**
 * The console's port: LIFEGUARD_STACK_CONSOLE_PORT when set; else, when the launcher was given
 * `--http-port-base <n>` (n > 0), the port after the workers' consecutive range (n + the number of
 * workers); `free` with `--http-port-base 0`; else 9430.
 */
export function consolePort(
  env: NodeJS.ProcessEnv,
  httpPorts: 'default' | 'free' | number,
  workerCount: number,
): number | 'free' {
  if (env.LIFEGUARD_STACK_CONSOLE_PORT !== undefined) return Number(env.LIFEGUARD_STACK_CONSOLE_PORT);
  if (httpPorts === 'free') return 'free';
  if (typeof httpPorts === 'number') return httpPorts + workerCount;
  return DEFAULT_CONSOLE_PORT;
}

/** A port on 127.0.0.1 the system has free now (for the console with `--http-port-base 0`). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        address && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * Starts the console (`node packages/console/dist/main.js`) on 127.0.0.1 and `port` (see
 * consolePort; default LIFEGUARD_STACK_CONSOLE_PORT, else 9430), pointed at the stack as the CLI is (`stack.clientEnvironment()`), read-only unless
 * the launcher's environment holds LIFEGUARD_CONSOLE_OPERATOR_TOKEN. Like a worker, it ends itself
 * when the launcher is gone, and when it ends unexpectedly the launcher logs it and starts it again
 * with the workers' restart policy (`--restart-attempts`). Resolves once its /healthz answers (at
 * most `timeoutSeconds`).
 * @throws Error with the console's last output lines when it exits or does not answer in time
 */
export async function startConsoleProcess(
  stack: Stack,
  timeoutSeconds = 30,
  port = Number(process.env.LIFEGUARD_STACK_CONSOLE_PORT ?? DEFAULT_CONSOLE_PORT),
): Promise<ConsoleProcess> {
  const supervised = new SupervisedConsole(stack, port, timeoutSeconds);
  await supervised.start();
  return supervised;
}
