import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { waitFor } from './wait-for.ts';

/** A port on 127.0.0.1 that nothing listened on a moment ago (for "connection refused" tests). */
export function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** A redis-server of a test's own (no persistence), for what the shared Redis must not go through. */
export interface PrivateRedis {
  readonly port: number;
  /** `redis://127.0.0.1:<port>/<database>`. */
  url(database: number): string;
  /** Stops the server (SIGKILL) and starts it again on the same port with `databases` databases. */
  restart(databases: number): Promise<void>;
  stop(): Promise<void>;
}

/** Spawns redis-server with `args` and waits until it answers PING on `port` (for this package's engines). */
export async function startServer(
  port: number,
  args: ReadonlyArray<string>,
  password?: string,
): Promise<ChildProcess> {
  const child = spawn('redis-server', [...args], { stdio: 'ignore' });
  const probe = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    retryStrategy: () => null,
    ...(password ? { password } : {}),
  });
  probe.on('error', () => undefined);
  try {
    await waitFor(`redis-server on port ${port}`, async () => {
      if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
      await probe.connect().catch(() => undefined);
      return (await probe.ping().catch(() => null)) === 'PONG';
    });
  } finally {
    probe.disconnect();
  }
  return child;
}

/** Stops a redis-server this package started, by its pid (SIGKILL), and waits for it to exit. */
export async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/**
 * Starts `redis-server` (from PATH) on a free port with `databases` databases.
 * @param password set as `requirepass` (the readiness check then sends it)
 * @throws Error when it does not answer PING within 10 s
 */
export async function startPrivateRedis(databases = 16, password?: string): Promise<PrivateRedis> {
  const port = await closedPort();
  const args = (count: number) => [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--databases',
    String(count),
    '--save',
    '',
    '--appendonly',
    'no',
    ...(password ? ['--requirepass', password] : []),
  ];
  let child = await startServer(port, args(databases), password);
  return {
    port,
    url: (database) => `redis://127.0.0.1:${port}/${database}`,
    async restart(count) {
      await stopServer(child);
      child = await startServer(port, args(count), password);
    },
    stop: () => stopServer(child),
  };
}

/** A Redis Sentinel of a test's own, watching one master. */
export interface PrivateSentinel {
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * Starts a Sentinel (`redis-server --sentinel`, quorum 1) on a free port watching the master
 * `masterName` at 127.0.0.1:`masterPort` (use a PrivateRedis: a Sentinel talks to its master).
 */
export async function startPrivateSentinel(
  masterPort: number,
  masterName = 'mymaster',
): Promise<PrivateSentinel> {
  const port = await closedPort();
  const directory = mkdtempSync(join(tmpdir(), 'lifeguard-sentinel-'));
  const config = join(directory, 'sentinel.conf');
  writeFileSync(
    config,
    `port ${port}\nbind 127.0.0.1\nsentinel monitor ${masterName} 127.0.0.1 ${masterPort} 1\n`,
  );
  const child = await startServer(port, [config, '--sentinel']);
  return {
    port,
    async stop() {
      await stopServer(child);
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** How a redis-server started by startDetachedRedis runs; the same options start it again on its data. */
export interface DetachedRedisOptions {
  readonly port: number;
  /** Its `dir`: the append-only files (`appendonlydir/`) and `redis.log`. */
  readonly directory: string;
  /** `--appendonly yes --appendfsync everysec`, as production runs it; `false`: no persistence at all. */
  readonly appendOnly: boolean;
}

/**
 * Starts redis-server on 127.0.0.1:`port` with its data in `directory` (created if absent), detached
 * in a process group of its own so that it outlives the calling process, `maxmemory-policy
 * noeviction` (Redis's default, and what BullMQ requires). With `appendOnly` it replays the
 * append-only file it finds there before it answers, so a restart keeps every acknowledged write.
 * @param onSpawn called with its pid as soon as it is spawned, before it answers
 * @returns its pid (= its process group id, for stopProcessGroup)
 * @throws Error when it exits or does not answer PING within `timeoutMilliseconds` (it is stopped first)
 */
export async function startDetachedRedis(
  options: DetachedRedisOptions,
  timeoutMilliseconds = 30_000,
  onSpawn: (pid: number) => void = () => undefined,
): Promise<number> {
  mkdirSync(options.directory, { recursive: true });
  const persistence = options.appendOnly
    ? ['--appendonly', 'yes', '--appendfsync', 'everysec']
    : ['--appendonly', 'no'];
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(options.port),
      '--bind',
      '127.0.0.1',
      '--dir',
      options.directory,
      '--save',
      '',
      ...persistence,
      '--maxmemory-policy',
      'noeviction',
      '--logfile',
      join(options.directory, 'redis.log'),
    ],
    { stdio: 'ignore', detached: true },
  );
  child.unref();
  const pid = child.pid;
  if (pid === undefined) throw new Error(`redis-server on port ${options.port} did not start`);
  onSpawn(pid);
  let exited: number | null = null;
  child.once('exit', (code) => {
    exited = code ?? -1;
  });
  const probe = new Redis({
    port: options.port,
    host: '127.0.0.1',
    lazyConnect: true,
    retryStrategy: () => null,
  });
  probe.on('error', () => undefined);
  const deadline = Date.now() + timeoutMilliseconds;
  try {
    for (;;) {
      if (exited !== null) throw new Error(`redis-server on port ${options.port} exited with ${exited}`);
      await probe.connect().catch(() => undefined);
      if ((await probe.ping().catch(() => null)) === 'PONG') return pid;
      if (Date.now() > deadline) {
        process.kill(-pid, 'SIGKILL');
        throw new Error(`redis-server on port ${options.port} not ready after ${timeoutMilliseconds} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    probe.disconnect();
  }
}

/** Runs `command` on the redis-server at 127.0.0.1:`port` over a short-lived connection (no retries). */
export async function askRedis<T>(port: number, command: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await command(client);
  } finally {
    client.disconnect();
  }
}
