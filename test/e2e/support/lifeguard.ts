import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { REDIS_URL, waitFor } from '@lifeguard/testing';

const root = resolve(import.meta.dirname, '../../..');

/** The lifeguard processes an end-to-end test can run. */
export type WorkerKind = 'provisioning-blocks' | 'node-monitor' | 'fencing-worker' | 'evacuation-worker';

const ENTRY_POINTS: Record<WorkerKind, { main: string; service: string }> = {
  'provisioning-blocks': { main: 'packages/provisioning-blocks/src/main.ts', service: 'provisioning-blocks' },
  'node-monitor': { main: 'packages/node-monitor/src/main.ts', service: 'node-monitor' },
  'fencing-worker': { main: 'packages/fencing-worker/src/main.ts', service: 'fencing-worker' },
  'evacuation-worker': { main: 'packages/evacuation-worker/src/main.ts', service: 'evacuation-worker' },
};

export interface LifeguardOptions {
  /** Which workers to run, in start order. */
  readonly workers: ReadonlyArray<WorkerKind>;
  readonly amqpUrl: string;
  readonly keyPrefix: string;
  /** clouds.yaml and the cloud's name in it (OS_CLIENT_CONFIG_FILE, OS_CLOUD). */
  readonly cloudsFile: string;
  readonly cloudName: string;
  /** InstanceHA's config.yaml (INSTANCEHA_CONFIG_PATH). */
  readonly configYaml: string;
  /** fencing.yaml (FENCING_CONFIG_PATH). */
  readonly fencingYaml: string;
  /** Variables for every worker. */
  readonly environment?: Readonly<Record<string, string>>;
  /** Variables for the workers of one kind, over everything else. */
  readonly workerEnvironment?: Readonly<Partial<Record<WorkerKind, Readonly<Record<string, string>>>>>;
}

/** One running lifeguard process and the log lines it wrote. */
export class LifeguardProcess {
  readonly lines: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(
    readonly name: WorkerKind,
    private readonly child: ChildProcess,
  ) {
    let buffer = '';
    const collect = (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const parts = buffer.split('\n');
      buffer = parts.pop() ?? '';
      for (const line of parts) if (line.trim()) this.lines.push(line);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    this.exited = new Promise((done) => child.once('exit', (code, signal) => done({ code, signal })));
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The JSON log records (other lines skipped). */
  records(): Array<Record<string, unknown>> {
    return this.lines.flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  }

  /**
   * The value of one Prometheus sample on the process's /metrics, e.g.
   * `metric('lifeguard_provisioning_commands_total', { command: 'port.create', outcome: 'applied' })`;
   * 0 when the sample is not there yet.
   */
  async metric(name: string, labels: Readonly<Record<string, string>> = {}): Promise<number> {
    const listening = this.records().find((record) => record.msg === 'health and metrics server listening');
    if (!listening) throw new Error(`${this.name} has no health and metrics server yet`);
    const text = await (await fetch(`http://127.0.0.1:${listening.port}/metrics`)).text();
    for (const line of text.split('\n')) {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match || match[1] !== name) continue;
      const found = Object.fromEntries(
        [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((each) => [
          each[1],
          each[2],
        ]),
      );
      if (Object.entries(labels).every(([key, value]) => found[key] === value)) return Number(match[3]);
    }
    return 0;
  }

  /** SIGTERM, then SIGKILL after `graceMilliseconds`; resolves once the process ended. */
  async stop(graceMilliseconds = 20_000): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMilliseconds);
    await this.exited;
    clearTimeout(timer);
  }
}

/** A running set of lifeguard workers. */
export interface Lifeguard {
  readonly processes: ReadonlyArray<LifeguardProcess>;
  /** Every line every process wrote, for "never appears" assertions. */
  text(): string;
  stop(): Promise<void>;
}

/**
 * Starts lifeguard's workers as the operator runs them: each its own process from its entry point
 * (TypeScript through tsx), configured by environment, config.yaml, fencing.yaml and clouds.yaml;
 * resolves once every one logged that it started.
 * @throws Error naming the worker that exited or did not start within a minute (its output attached)
 */
export async function startLifeguard(options: LifeguardOptions): Promise<Lifeguard> {
  const processes: LifeguardProcess[] = [];
  for (const kind of options.workers) {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--conditions=@lifeguard/source', ENTRY_POINTS[kind].main],
      {
        cwd: root,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: process.env.HOME ?? '/tmp',
          LIFEGUARD_AMQP_URL: options.amqpUrl,
          LIFEGUARD_REDIS_URL: REDIS_URL,
          LIFEGUARD_REDIS_KEY_PREFIX: options.keyPrefix,
          LIFEGUARD_HTTP_PORT: '0',
          LIFEGUARD_INSTANCE_NAME: `e2e:${kind}`,
          LIFEGUARD_SHUTDOWN_TIMEOUT_SECONDS: '10',
          OS_CLIENT_CONFIG_FILE: options.cloudsFile,
          OS_CLOUD: options.cloudName,
          INSTANCEHA_CONFIG_PATH: options.configYaml,
          FENCING_CONFIG_PATH: options.fencingYaml,
          ...options.environment,
          ...options.workerEnvironment?.[kind],
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    processes.push(new LifeguardProcess(kind, child));
  }
  const lifeguard: Lifeguard = {
    processes,
    text: () => processes.map((each) => each.lines.join('\n')).join('\n'),
    stop: async () => {
      await Promise.all(processes.map((each) => each.stop()));
    },
  };
  try {
    await Promise.all(
      processes.map((each) =>
        waitFor(
          `${each.name} to start`,
          () => {
            if (!each.running) throw new Error(`${each.name} exited:\n${each.lines.slice(-20).join('\n')}`);
            return each
              .records()
              .some((record) => record.msg === `${ENTRY_POINTS[each.name].service} started`);
          },
          90_000,
          100,
        ),
      ),
    );
  } catch (error) {
    await lifeguard.stop();
    throw error;
  }
  return lifeguard;
}

/** Waits until the node monitor completed `count` more poll cycles than it had when called. */
export async function waitForPollCycles(lifeguard: Lifeguard, count: number): Promise<void> {
  const monitor = lifeguard.processes.find((each) => each.name === 'node-monitor');
  if (!monitor) throw new Error('no node-monitor runs');
  const cycles = () =>
    monitor.records().filter((record) => String(record.msg ?? '').startsWith('Poll cycle completed')).length;
  const target = cycles() + count;
  await waitFor(`${count} more poll cycles`, () => cycles() >= target, 60_000, 100);
}
