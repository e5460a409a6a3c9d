import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lifeguardEntryPoint, REDIS_URL, waitFor } from '@lifeguard/testing';
import { type EvacuationBed, FAST_WORKER_ENVIRONMENT } from './evacuation-bed.ts';

/** The unit of /proc/<pid>/stat's times on Linux (USER_HZ, 100 on every common kernel). */
const CLOCK_TICKS_PER_SECOND = 100;

export interface WorkerProcessOptions {
  /** LIFEGUARD_INSTANCE_NAME of the process. */
  readonly name: string;
  /** AMQP URL (a test vhost) for events. */
  readonly amqpUrl: string;
  /** InstanceHA keys for its config.yaml. */
  readonly instanceHa: Record<string, string>;
  /** More environment variables (LIFEGUARD_EVACUATION_ROLES, ...). */
  readonly environment?: Record<string, string>;
  /** Node options before the entry point (`--cpu-prof`, which NODE_OPTIONS does not accept). */
  readonly nodeArguments?: ReadonlyArray<string>;
  /**
   * Called with the process as soon as it is spawned, before it has started: a caller that may be
   * stopped meanwhile (a benchmark's time limit) can stop it and show what it wrote.
   */
  readonly onSpawn?: (worker: WorkerProcess) => void;
}

/**
 * `lifeguard-evacuation-worker` as a real process (its main.ts, run from source) against the bed's
 * cloud-sim, Redis prefix and a RabbitMQ vhost, configured the way an operator does: config.yaml,
 * clouds.yaml and environment variables. Its JSON log lines are kept.
 */
export class WorkerProcess {
  readonly lines: string[] = [];
  readonly exited: Promise<number | null>;

  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
    private readonly directory: string,
  ) {
    let buffered = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      for (const line of parts) if (line.trim()) this.lines.push(line);
    });
    child.stderr?.on('data', (chunk: Buffer) => this.lines.push(chunk.toString('utf8')));
    this.exited = new Promise((resolveExit) => child.on('exit', (code) => resolveExit(code)));
  }

  static async start(bed: EvacuationBed, options: WorkerProcessOptions): Promise<WorkerProcess> {
    const directory = mkdtempSync(join(tmpdir(), 'lifeguard-evacuation-'));
    const configLines = Object.entries({ TAGGED_AGGREGATES: 'false', ...options.instanceHa }).map(
      ([key, value]) => `  ${key}: ${JSON.stringify(value)}`,
    );
    writeFileSync(join(directory, 'config.yaml'), `config:\n${configLines.join('\n')}\n`);
    writeFileSync(
      join(directory, 'clouds.yaml'),
      JSON.stringify({ clouds: { sim: bed.sim.cloudEntry('admin_token') } }),
    );
    const entryPoint = lifeguardEntryPoint('evacuation-worker');
    const child = spawn(process.execPath, [...(options.nodeArguments ?? []), ...entryPoint], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        INSTANCEHA_CONFIG_PATH: join(directory, 'config.yaml'),
        OS_CLIENT_CONFIG_FILE: join(directory, 'clouds.yaml'),
        OS_CLOUD: 'sim',
        LIFEGUARD_AMQP_URL: options.amqpUrl,
        LIFEGUARD_REDIS_URL: REDIS_URL,
        LIFEGUARD_REDIS_KEY_PREFIX: bed.prefix,
        LIFEGUARD_HTTP_PORT: '0',
        LIFEGUARD_INSTANCE_NAME: options.name,
        LIFEGUARD_LOG_LEVEL: 'info',
        LIFEGUARD_UNSAFE_SHORT_INTERVALS: 'true',
        ...FAST_WORKER_ENVIRONMENT,
        ...options.environment,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const worker = new WorkerProcess(options.name, child, directory);
    options.onSpawn?.(worker);
    let exitCode: number | null | undefined;
    void worker.exited.then((code) => {
      exitCode = code;
    });
    try {
      await waitFor(
        `${options.name} to start`,
        () => {
          if (exitCode !== undefined)
            throw new Error(`${options.name} exited with ${exitCode}:\n${worker.lines.join('\n')}`);
          return worker.messages().includes('evacuation-worker started');
        },
        // From source, tsx compiles the worker at start: on a loaded 2-core machine that took over 60 s.
        120_000,
      );
    } catch (error) {
      // Never leave a process behind that did not come up; say what it had written.
      const exitedByItself = exitCode !== undefined;
      await worker.stop();
      if (exitedByItself) throw error;
      throw new Error(`${(error as Error).message}; its output so far:\n${worker.lastLines(20)}`, {
        cause: error,
      });
    }
    return worker;
  }

  /** The last `count` lines it wrote (stdout and stderr), one per line. */
  lastLines(count: number): string {
    return this.lines.slice(-count).join('\n');
  }

  /** The `msg` of every JSON log line. */
  messages(): string[] {
    const messages: string[] = [];
    for (const line of this.lines) {
      try {
        messages.push(String((JSON.parse(line) as { msg?: unknown }).msg ?? ''));
      } catch {
        // not a JSON line (stderr)
      }
    }
    return messages;
  }

  /** The health and metrics port (from the start-up line). */
  httpPort(): number {
    for (const line of this.lines) {
      try {
        const record = JSON.parse(line) as { msg?: string; http?: number };
        if (record.msg === 'evacuation-worker starting' && typeof record.http === 'number')
          return record.http;
      } catch {
        // not a JSON line
      }
    }
    throw new Error(`${this.name} logged no HTTP port`);
  }

  /**
   * The CPU time the process used so far (user and system, seconds), from /proc (Linux); null where
   * it cannot be read (another system, or the process has ended).
   */
  cpuSeconds(): number | null {
    try {
      // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
      const stat = readFileSync(`/proc/${this.child.pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
    } catch {
      return null;
    }
  }

  /** Sends a signal (SIGKILL: the process dies mid-work, nothing is cleaned up). */
  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** Stops the process (SIGTERM, then SIGKILL after 15 s) and removes its files. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
      await this.exited;
      clearTimeout(timer);
    }
    rmSync(this.directory, { recursive: true, force: true });
  }
}
