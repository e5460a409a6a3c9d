import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import type { Redis } from 'ioredis';
import { PACKAGE_REPOSITORY_ROOT, WORKER_KINDS } from '../src/index.ts';
import { ensureCompiledPackages } from './support/compiled-packages.ts';
import {
  type ComposeService,
  durationSeconds,
  interpolate,
  mountedFiles,
  readComposeFile,
} from './support/compose.ts';
import { unusedListenPort } from './support/stack-bed.ts';

/**
 * Each lifeguard service of docker-compose.yml run here as the file states it — its command after the
 * image's entry point `node`, its environment, its mounted files — with only what a container would
 * see differently mapped: the hostnames rabbitmq, redis and cloud-sim to 127.0.0.1, this test's
 * RabbitMQ vhost and Redis key prefix, free health ports (containers each have their own), and the
 * container paths of secrets and configs to the files Compose would mount. Readiness is the
 * service's own compose healthcheck command; SIGTERM must end it cleanly within stop_grace_period.
 */
const root = PACKAGE_REPOSITORY_ROOT;
const compose = readComposeFile();

interface RunningService {
  readonly name: string;
  readonly child: ChildProcess;
  readonly env: Record<string, string>;
  readonly output: string[];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

let vhost: TestVhost;
let keyPrefix: string;
let redis: Redis;
let directory: string;
let cloudSimPort: number;
const running: RunningService[] = [];

/** A compose environment value as the process sees it here. */
function mapValue(name: string, value: string, files: ReadonlyMap<string, string>): string {
  const mounted = files.get(value);
  if (mounted) return mounted;
  if (name === 'LIFEGUARD_AMQP_URL') {
    const url = new URL(value);
    assert.equal(url.hostname, 'rabbitmq', `${name} names the rabbitmq service`);
    return new URL(vhost.url).toString();
  }
  if (name === 'LIFEGUARD_REDIS_URL') {
    const url = new URL(value);
    assert.equal(url.hostname, 'redis', `${name} names the redis service`);
    url.hostname = '127.0.0.1';
    return url.toString();
  }
  if (name === 'LIFEGUARD_REDIS_KEY_PREFIX') return keyPrefix;
  if (name === 'LIFEGUARD_HTTP_HOST' || name === 'CLOUD_SIM_HOST') return '127.0.0.1';
  return value.replaceAll(/\bcloud-sim:\d+/g, `127.0.0.1:${cloudSimPort}`);
}

/** The service's environment (interpolated with the file's defaults) mapped to this machine. */
async function localEnvironment(service: ComposeService): Promise<Record<string, string>> {
  const files = new Map<string, string>();
  for (const mount of mountedFiles(compose, service)) {
    // clouds.yaml names cloud-sim:8780; the copy names this test's cloud-sim.
    const copy = join(directory, `${basename(mount.target)}`);
    const text = readFileSync(join(root, mount.file), 'utf8');
    writeFileSync(copy, text.replaceAll(/\bcloud-sim:\d+/g, `127.0.0.1:${cloudSimPort}`));
    files.set(mount.target, copy);
  }
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/',
  };
  for (const [name, value] of Object.entries(service.environment ?? {})) {
    env[name] = mapValue(name, interpolate(value), files);
  }
  if (env.LIFEGUARD_HTTP_PORT) env.LIFEGUARD_HTTP_PORT = String(await unusedListenPort());
  // Masakari's port is the container's own; on this one machine another process may hold 15868.
  if (env.LIFEGUARD_MASAKARI_API_PORT) env.LIFEGUARD_MASAKARI_API_PORT = String(await unusedListenPort());
  return env;
}

function start(name: string, service: ComposeService, env: Record<string, string>): RunningService {
  assert.equal(service.entrypoint, undefined, `${name} uses the image's entry point, node`);
  const child = spawn(process.execPath, service.command ?? [], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  const started = { name, child, env, output, exited };
  running.push(started);
  return started;
}

/** Runs the service's compose healthcheck (`CMD` form) here, in its environment; true on exit 0. */
function healthy(service: ComposeService, env: Record<string, string>): Promise<boolean> {
  const [form, program, ...args] = service.healthcheck!.test;
  assert.equal(form, 'CMD');
  assert.equal(program, 'node');
  const mapped = args.map((arg) => arg.replaceAll(/127\.0\.0\.1:8780\b/g, `127.0.0.1:${cloudSimPort}`));
  return new Promise((resolve) => {
    const probe = spawn(process.execPath, mapped, { cwd: root, env, stdio: 'ignore' });
    probe.on('close', (code) => resolve(code === 0));
  });
}

/** SIGTERM, as `docker compose stop` sends it; the process must end within stop_grace_period. */
async function stopWithinGrace(
  name: string,
  service: ComposeService,
  target: RunningService,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const grace = durationSeconds(service.stop_grace_period ?? '10s');
  target.child.kill('SIGTERM');
  const timer = setTimeout(() => target.child.kill('SIGKILL'), grace * 1000);
  const exit = await target.exited;
  clearTimeout(timer);
  assert.notEqual(exit.signal, 'SIGKILL', `${name} did not end within stop_grace_period (${grace} s)`);
  return exit;
}

before(async () => {
  await ensureCompiledPackages(root);
  vhost = await createTestVhost('compose');
  keyPrefix = randomKeyPrefix('compose');
  redis = testRedis();
  directory = mkdtempSync(join(tmpdir(), 'lifeguard-compose-'));
  cloudSimPort = await unusedListenPort();
});

after(async () => {
  for (const each of running) if (each.child.exitCode === null) each.child.kill('SIGKILL');
  await Promise.all(running.map((each) => each.exited));
  await deleteKeysWithPrefix(redis, keyPrefix);
  redis.disconnect();
  await vhost.delete();
  rmSync(directory, { recursive: true, force: true });
});

describe('docker-compose.yml services run as the file states them', () => {
  let cloudSim: RunningService;

  it('cloud-sim (profile sim) becomes healthy by its own healthcheck', async () => {
    const service = compose.services['cloud-sim']!;
    const env = await localEnvironment(service);
    env.CLOUD_SIM_PORT = String(cloudSimPort);
    env.CLOUD_SIM_REDFISH_PORT = String(await unusedListenPort());
    cloudSim = start('cloud-sim', service, env);
    await waitFor(
      'cloud-sim healthy',
      () => cloudSim.child.exitCode === null && healthy(service, env),
      // An upper bound for a loaded machine (the whole suite runs beside it), as the workers' below.
      90_000,
      200,
    );
  });

  for (const kind of WORKER_KINDS) {
    it(`${kind}: ready by its compose healthcheck (/readyz), then SIGTERM ends it cleanly within stop_grace_period`, async () => {
      const service = compose.services[kind]!;
      const env = await localEnvironment(service);
      const worker = start(kind, service, env);
      await waitFor(
        `${kind} healthy`,
        async () => {
          if (worker.child.exitCode !== null) throw new Error(`${kind} exited: ${worker.output.join('')}`);
          return healthy(service, env);
        },
        60_000,
        200,
      );
      const exit = await stopWithinGrace(kind, service, worker);
      assert.deepEqual(exit, { code: 0, signal: null }, worker.output.join('').slice(-2000));
      assert.match(worker.output.join(''), /"msg":"shutdown complete"/);
    });
  }

  it('cloud-sim stops on SIGTERM', async () => {
    const exit = await stopWithinGrace('cloud-sim', compose.services['cloud-sim']!, cloudSim);
    assert.deepEqual(exit, { code: 0, signal: null });
  });
});
