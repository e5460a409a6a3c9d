// How the launcher prepares each worker process: the build it runs first, the environment and
// NODE_OPTIONS a worker inherits, its health port, and where to read the port a worker chose itself.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { WorkerHeartbeat } from '@lifeguard/contracts';
import type { RedisClient } from '@lifeguard/runtime';
import { WorkerRegistry } from '@lifeguard/runtime';
import { BuildFailedError, StackConfigurationError } from './errors.ts';
import type { ResolvedStackOptions } from './stack-options.ts';
import type { WorkerDefinition } from './worker-definitions.ts';
import type { WorkerProcess } from './worker-process.ts';

/** Runs `turbo run build` in the checkout (cached: a second run takes about a second). */
export async function buildPackages(repositoryRoot: string): Promise<void> {
  const turbo = join(repositoryRoot, 'node_modules', '.bin', 'turbo');
  if (!existsSync(turbo)) {
    throw new StackConfigurationError(`${turbo} is missing: run npm install in ${repositoryRoot} first`);
  }
  const child = spawn(turbo, ['run', 'build', '--output-logs=errors-only'], {
    cwd: repositoryRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new BuildFailedError(code, output.trim());
}

/** The environment every worker inherits: the launcher's, without what would mislead a worker. */
export function inheritedEnvironment(options: ResolvedStackOptions): Record<string, string> {
  if (!options.inheritEnvironment) {
    const minimal: Record<string, string> = {};
    for (const name of ['PATH', 'HOME', 'LANG', 'TZ']) {
      const value = process.env[name];
      if (value !== undefined) minimal[name] = value;
    }
    return minimal;
  }
  const inherited: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined || name === 'NODE_OPTIONS') continue;
    // A simulated stack must never reach a real cloud named by the operator's shell.
    if (options.cloud.kind === 'simulated' && name.startsWith('OS_')) continue;
    inherited[name] = value;
  }
  return inherited;
}

/** NODE_OPTIONS of a worker: the launcher watch (and tsx with the source condition in source mode). */
export function nodeOptions(options: ResolvedStackOptions): string {
  const root = options.repositoryRoot;
  const watch =
    options.run === 'dist'
      ? join(root, 'packages', 'stack', 'dist', 'parent-watch.js')
      : join(root, 'packages', 'stack', 'src', 'parent-watch.ts');
  const quoted = (value: string) => JSON.stringify(value);
  const watchImport = `--import=${quoted(pathToFileURL(watch).href)}`;
  return options.run === 'dist' ? watchImport : `--import=tsx --conditions=@lifeguard/source ${watchImport}`;
}

/** The health port of each worker: the defaults, 0 (each binds a free one), or consecutive from a base. */
export function chooseHttpPorts(
  options: ResolvedStackOptions,
  definitions: ReadonlyArray<WorkerDefinition>,
): number[] {
  const { httpPorts } = options;
  if (httpPorts === 'default') return definitions.map((definition) => definition.defaultHttpPort);
  // `free`: each process binds port 0 itself (no race with other programs for a port chosen earlier)
  // and the stack reads the port from the worker registry.
  if (httpPorts === 'free') return definitions.map(() => 0);
  return definitions.map((_, index) => httpPorts + index);
}

/**
 * Reads a process's health port from the worker registry (`<prefix>:workers:<service>:<instance>`,
 * written when its start-up finished), if the record is this process's (same pid).
 */
export function registryPortLookup(
  redis: RedisClient,
  keyPrefix: string,
  service: string,
  instance: string,
): (pid: number) => Promise<number | null> {
  const key = WorkerRegistry.workerKey(keyPrefix, service, instance);
  return async (pid) => {
    const body = await redis.get(key);
    if (!body) return null;
    const record = WorkerHeartbeat.safeParse(JSON.parse(body));
    return record.success && record.data.pid === pid && record.data.httpPort > 0
      ? record.data.httpPort
      : null;
  };
}

/** Seconds a worker gets after SIGTERM beyond its own shutdown budget before it is SIGKILLed. */
const KILL_GRACE_SECONDS = 5;

/** Milliseconds from SIGTERM to SIGKILL for `worker`: its LIFEGUARD_SHUTDOWN_TIMEOUT_SECONDS (default 25) plus the grace. */
export function killAfterMilliseconds(worker: WorkerProcess): number {
  const budget = Number(worker.options.env.LIFEGUARD_SHUTDOWN_TIMEOUT_SECONDS);
  return ((Number.isFinite(budget) && budget > 0 ? budget : 25) + KILL_GRACE_SECONDS) * 1000;
}
