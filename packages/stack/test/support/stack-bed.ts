import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  REDIS_URL,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import type { Redis } from 'ioredis';
import type { StackOptions, WorkerLogLine } from '../../src/index.ts';
import { portIsFree } from '../../src/preflight.ts';
import { ensureCompiledPackages } from './compiled-packages.ts';

/**
 * What a stack test isolates: a RabbitMQ vhost, a Redis key prefix and a state directory of its own;
 * the options that point a stack at them (free ports, silent output, lines kept); and the clean-up.
 */
export class StackBed {
  readonly lines: WorkerLogLine[] = [];
  readonly redis: Redis = testRedis();

  private constructor(
    readonly vhost: TestVhost,
    readonly keyPrefix: string,
    readonly stateDirectory: string,
    /** The console port a launcher of this bed listens on (never the default 9430 a demo may hold). */
    readonly consolePort: number,
  ) {}

  static async create(label: string): Promise<StackBed> {
    const vhost = await createTestVhost(label);
    return new StackBed(
      vhost,
      randomKeyPrefix(label),
      mkdtempSync(join(tmpdir(), `lifeguard-${label}-`)),
      await unusedListenPort(),
    );
  }

  /** Options for startStack against this bed (more options over them). */
  options(more: StackOptions = {}): StackOptions {
    return {
      amqpUrl: this.vhost.url,
      redisUrl: REDIS_URL,
      keyPrefix: this.keyPrefix,
      stateDirectory: this.stateDirectory,
      httpPorts: 'free',
      logFormat: 'silent',
      onLogLine: (line) => this.lines.push(line),
      ...more,
    };
  }

  /** The environment of a launcher process (`node packages/stack/dist/main.js`) against this bed. */
  launcherEnvironment(more: Record<string, string> = {}): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    for (const [name, value] of Object.entries(process.env)) {
      if (!name.startsWith('OS_') && !name.startsWith('LIFEGUARD_') && name !== 'NODE_OPTIONS')
        env[name] = value;
    }
    return {
      ...env,
      LIFEGUARD_AMQP_URL: this.vhost.url,
      LIFEGUARD_REDIS_URL: REDIS_URL,
      LIFEGUARD_REDIS_KEY_PREFIX: this.keyPrefix,
      LIFEGUARD_STACK_STATE_DIRECTORY: this.stateDirectory,
      LIFEGUARD_STACK_HTTP_PORT_BASE: '0',
      LIFEGUARD_STACK_CONSOLE_PORT: String(this.consolePort),
      LIFEGUARD_STACK_LOG_FORMAT: 'json',
      ...more,
    };
  }

  /** Lines of one process whose pino message is `message`. */
  messages(worker: string, message: string): WorkerLogLine[] {
    return this.lines.filter((line) => line.worker === worker && line.record?.msg === message);
  }

  async close(): Promise<void> {
    await deleteKeysWithPrefix(this.redis, this.keyPrefix);
    this.redis.disconnect();
    await this.vhost.delete();
    rmSync(this.stateDirectory, { recursive: true, force: true });
  }
}

/**
 * A port nothing listens on, below the ephemeral range (/proc/sys/net/ipv4/ip_local_port_range), so
 * no outgoing connection of another program takes it between this check and the bind that follows.
 */
export async function unusedListenPort(): Promise<number> {
  const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
    .trim()
    .split(/\s+/)
    .map(Number);
  const top = Math.min(low ?? 32768, 32768) - 1;
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20000 + Math.floor(Math.random() * (top - 20000));
    if (await portIsFree(port)) return port;
  }
  throw new Error('no unused port found between 20000 and the ephemeral range');
}

/** True while a process with this pid exists. */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * What /proc says of each process still there, for a test that waited for them to end: its name,
 * state, parent, where it sleeps in the kernel, what its output is connected to, and its command line.
 */
export function describeProcesses(pids: ReadonlyArray<number>): string {
  const read = (path: string, how: (text: string) => string) => {
    try {
      return how(path.includes('/fd/') ? readlinkSync(path) : readFileSync(path, 'utf8'));
    } catch {
      return '?';
    }
  };
  return pids
    .map((pid) => {
      const status = read(`/proc/${pid}/status`, (text) =>
        ['Name', 'State', 'PPid', 'Threads']
          .map((field) => new RegExp(`^${field}:\\s*(.*)$`, 'm').exec(text)?.[1] ?? '?')
          .join(' / '),
      );
      const wchan = read(`/proc/${pid}/wchan`, (text) => text);
      const output = read(`/proc/${pid}/fd/1`, (text) => text);
      const command = read(`/proc/${pid}/cmdline`, (text) => text.split('\0').join(' ').trim());
      return `pid ${pid}: ${status} (name / state / parent / threads), wchan ${wchan}, stdout ${output}: ${command}`;
    })
    .join('\n');
}

/**
 * Waits until `remaining()` lists no process; on timeout the error describes each one left
 * (describeProcesses), so a process that did not end says where it stands.
 */
export async function waitForProcessesToEnd(
  what: string,
  remaining: () => number[],
  timeoutMilliseconds: number,
): Promise<void> {
  try {
    await waitFor(what, () => remaining().length === 0, timeoutMilliseconds, 200);
  } catch (error) {
    throw new Error(`${(error as Error).message}; still there:\n${describeProcesses(remaining())}`);
  }
}

/** Pids of this user's processes whose environment has `name=value` (read from /proc). */
export function processesWithEnvironment(name: string, value: string): number[] {
  const wanted = `${name}=${value}`;
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(wanted))
        found.push(Number(entry));
    } catch {
      // gone, or another user's process
    }
  }
  return found;
}

/**
 * Hooks for a file of stack tests, registered where it is called: `before`, the packages are built
 * (the stack runs the compiled workers; cached when nothing changed); `after`, every bed created
 * through the returned function (StackBed.create(label)) is closed once `beforeClosing(bed)` resolved.
 * `after` hooks run in the order they were registered: register what must end before the beds close
 * (stacks, launchers) first.
 */
export function stackBedsForFile(
  beforeClosing: (bed: StackBed) => Promise<void> = async () => undefined,
): (label: string) => Promise<StackBed> {
  const beds: StackBed[] = [];
  before(async () => {
    await ensureCompiledPackages();
  });
  after(async () => {
    for (const each of beds) {
      await beforeClosing(each);
      await each.close();
    }
  });
  return async (label) => {
    const created = await StackBed.create(label);
    beds.push(created);
    return created;
  };
}
