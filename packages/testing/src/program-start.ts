import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { lifeguardEntryPoint } from './lifeguard-processes.ts';
import { closedPort } from './redis-server.ts';
import { waitFor } from './wait-for.ts';

/** What a program said while it started, and how it ended. */
export interface ProgramStart {
  /** Every line of its standard output and error, in order. */
  readonly lines: ReadonlyArray<string>;
  /** The first line `until` accepted, or null when the program exited first. */
  readonly matched: string | null;
  /** Its exit status (null when it was stopped by a signal, as after a match). */
  readonly code: number | null;
}

/**
 * Runs entry point `main` of packages/<packageName> (lifeguardEntryPoint) with exactly `env` until a
 * line of its output passes `until` or it exits, then stops it (SIGKILL) and waits for its end: for
 * what a program says, or refuses, at start-up.
 * @throws Error when neither happens within `timeoutMilliseconds`
 */
export async function startProgramUntil(
  packageName: string,
  main: string,
  env: Record<string, string>,
  until: (line: string) => boolean,
  timeoutMilliseconds = 30_000,
): Promise<ProgramStart> {
  const child = spawn(process.execPath, lifeguardEntryPoint(packageName, main), {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let matched: string | null = null;
  let code: number | null | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('close', (status) => {
      code = status;
      resolve();
    }),
  );
  for (const stream of [child.stdout, child.stderr]) {
    let buffer = '';
    stream.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const parts = buffer.split('\n');
      buffer = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        if (matched === null && until(line)) matched = line;
      }
    });
  }
  try {
    await waitFor(
      `${packageName} ${main} to say it, or to exit`,
      () => matched !== null || code !== undefined,
      timeoutMilliseconds,
    );
  } finally {
    if (code === undefined) child.kill('SIGKILL');
    await exited;
  }
  return { lines, matched, code: code ?? null };
}

/**
 * A minimal environment (PATH) whose Redis and RabbitMQ URLs point at a port nothing listens on, and
 * with no health port: for what a program says at start-up before it contacts a broker.
 */
export async function brokerlessEnvironment(): Promise<Record<string, string>> {
  const port = await closedPort();
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    LIFEGUARD_REDIS_URL: `redis://127.0.0.1:${port}/0`,
    LIFEGUARD_AMQP_URL: `amqp://guest:guest@127.0.0.1:${port}/`,
    LIFEGUARD_HTTP_PORT: '0',
  };
}

/** A clouds.yaml in `directory` with cloud `demo` (an admin token, a Nova never called): its variables. */
export function unusedCloudEnvironment(directory: string): Record<string, string> {
  const path = join(directory, 'clouds.yaml');
  writeFileSync(
    path,
    'clouds:\n  demo:\n    auth_type: admin_token\n    auth:\n      token: admin:admin\n      endpoint: http://127.0.0.1:9/compute/v2.1\n',
  );
  return { OS_CLIENT_CONFIG_FILE: path, OS_CLOUD: 'demo' };
}

/** The warning a program logs at start-up for a variable under its prefixes that it does not read. */
export interface UnknownVariableWarning {
  readonly level: unknown;
  readonly variable: unknown;
  readonly meant: unknown;
  readonly msg: unknown;
}

/**
 * Starts entry point `main` of packages/<packageName> without a broker (brokerlessEnvironment, plus
 * `env`) until it logs a line naming `variable`, and returns that JSON record's warning fields.
 * @throws Error with everything the program said when it exited without naming `variable`
 */
export async function unknownVariableWarning(
  packageName: string,
  main: string,
  env: Record<string, string>,
  variable: string,
): Promise<UnknownVariableWarning> {
  const started = await startProgramUntil(
    packageName,
    main,
    { ...(await brokerlessEnvironment()), ...env },
    (line) => line.includes(variable),
  );
  if (!started.matched)
    throw new Error(`${packageName} ${main} never named ${variable}:\n${started.lines.join('\n')}`);
  const { level, variable: named, meant, msg } = JSON.parse(started.matched) as Record<string, unknown>;
  return { level, variable: named, meant, msg };
}
