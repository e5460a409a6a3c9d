import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Stack } from './stack.ts';
import { PACKAGE_REPOSITORY_ROOT } from './stack-options.ts';

/** The console's port when LIFEGUARD_STACK_CONSOLE_PORT is not set. */
export const DEFAULT_CONSOLE_PORT = 9430;

/** The operator web console the launcher runs next to the workers: its URL, and how to stop it. */
export interface ConsoleProcess {
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * Starts the console (`node packages/console/dist/main.js`) on 127.0.0.1 and LIFEGUARD_STACK_CONSOLE_PORT
 * (default 9430), pointed at the stack as the CLI is (`stack.clientEnvironment()`), read-only unless
 * the launcher's environment holds LIFEGUARD_CONSOLE_OPERATOR_TOKEN. Like a worker, it ends itself
 * when the launcher is gone. Resolves once its /healthz answers (at most `timeoutSeconds`).
 * @throws Error with the console's last output lines when it exits or does not answer in time
 */
export async function startConsoleProcess(stack: Stack, timeoutSeconds = 30): Promise<ConsoleProcess> {
  const port = Number(process.env.LIFEGUARD_STACK_CONSOLE_PORT ?? DEFAULT_CONSOLE_PORT);
  const watch = pathToFileURL(
    join(PACKAGE_REPOSITORY_ROOT, 'packages', 'stack', 'dist', 'parent-watch.js'),
  ).href;
  const env: NodeJS.ProcessEnv = {
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
  const child: ChildProcess = spawn(process.execPath, ['packages/console/dist/main.js'], {
    cwd: PACKAGE_REPOSITORY_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-2000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}/`;
  const deadline = Date.now() + timeoutSeconds * 1000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`the console exited (status ${child.exitCode}): ${output.trim()}`);
    const healthy = await fetch(`${url}healthz`, { signal: AbortSignal.timeout(1000) }).then(
      (response) => response.ok,
      () => false,
    );
    if (healthy) break;
    if (Date.now() > deadline) {
      child.kill('SIGTERM');
      throw new Error(`the console did not answer on ${url} within ${timeoutSeconds} s: ${output.trim()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    url,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
