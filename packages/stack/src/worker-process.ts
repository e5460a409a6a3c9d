import { type ChildProcess, spawn } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { WorkerStartError } from './errors.ts';
import { LineSplitter, parseRecord, type WorkerLogLine } from './log-output.ts';
import type { WorkerDefinition } from './worker-definitions.ts';

/** Process exit statuses the workers use (runtime's runMain). */
const EXIT_MEANINGS: Readonly<Record<number, string>> = {
  78: 'invalid configuration',
  69: 'a broker could not be reached',
};

/** How a process ended. */
export interface WorkerExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export function describeExit(exit: WorkerExit): string {
  if (exit.signal) return `was ended by ${exit.signal}`;
  const meaning = exit.code !== null ? EXIT_MEANINGS[exit.code] : undefined;
  return `exited with status ${exit.code}${meaning ? ` (${meaning})` : ''}`;
}

export interface WorkerProcessOptions {
  readonly definition: WorkerDefinition;
  /** The program (`node`) and its arguments, run in `cwd`. */
  readonly command: string;
  readonly args: ReadonlyArray<string>;
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** Host and port of the process's health server; port 0: the process picks one (see `findHttpPort`). */
  readonly httpHost: string;
  readonly httpPort: number;
  /**
   * With port 0: resolves the port this process (by pid) listens on once it is known, else null.
   * The stack reads it from the worker registry, which a process writes when its start-up finished.
   */
  readonly findHttpPort?: (pid: number) => Promise<number | null>;
  readonly onLine: (line: WorkerLogLine) => void;
  readonly onExit: (worker: WorkerProcess, exit: WorkerExit) => void;
}

/**
 * One worker as a child process in its own process group (so a terminal's Ctrl-C reaches only the
 * launcher, which then sends exactly one SIGTERM: a second signal makes a worker exit at once). Its
 * output is cut into lines and handed on; its last lines are kept for error messages.
 */
export class WorkerProcess {
  private child: ChildProcess | null = null;
  private exitPromise: Promise<WorkerExit> | null = null;
  private readonly recent: string[] = [];
  private stopping = false;
  private killedByStop = false;
  /** When the process was last started (epoch milliseconds), or null. */
  startedAt: number | null = null;
  /** The last exit, or null while running or never started. */
  lastExit: WorkerExit | null = null;
  /** The health port: as configured, or, with port 0, as found once the process started (0 until then). */
  httpPort: number;

  constructor(readonly options: WorkerProcessOptions) {
    this.httpPort = options.httpPort;
  }

  get name(): string {
    return this.options.definition.name;
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  get running(): boolean {
    return this.child !== null && this.lastExit === null;
  }

  /** True when the last stop() had to SIGKILL the process (it outlived its grace period). */
  get hadToBeKilled(): boolean {
    return this.killedByStop;
  }

  /** True while the launcher is stopping this process (its exit is expected). */
  get expectedExit(): boolean {
    return this.stopping;
  }

  /** `http://host:port` of its health and metrics server. */
  get baseUrl(): string {
    const host = this.options.httpHost.includes(':') ? `[${this.options.httpHost}]` : this.options.httpHost;
    return `http://${host}:${this.httpPort}`;
  }

  /** Resolves when the process ends (immediately when it already did). */
  get exited(): Promise<WorkerExit> {
    return this.exitPromise ?? Promise.resolve({ code: null, signal: null });
  }

  /** The last lines of its output (at most 40). */
  lastLines(): string[] {
    return [...this.recent];
  }

  start(): void {
    if (this.running) throw new Error(`${this.name} is already running`);
    this.stopping = false;
    this.killedByStop = false;
    this.startedAt = Date.now();
    this.lastExit = null;
    this.httpPort = this.options.httpPort;
    const { command, args, cwd, env, onLine, definition } = this.options;
    const child = spawn(command, [...args], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.child = child;
    const remember = (text: string) => {
      this.recent.push(text);
      if (this.recent.length > 40) this.recent.shift();
    };
    for (const stream of ['stdout', 'stderr'] as const) {
      const splitter = new LineSplitter((text) => {
        remember(text);
        onLine({ worker: definition.name, stream, text, record: parseRecord(text) });
      });
      child[stream]?.on('data', (chunk: Buffer) => splitter.push(chunk));
      child[stream]?.on('end', () => splitter.flush());
    }
    this.exitPromise = new Promise((resolve) => {
      child.once('error', (error) => {
        remember(`could not start: ${error.message}`);
        const exit = { code: null, signal: null };
        this.lastExit = exit;
        resolve(exit);
      });
      child.once('close', (code, signal) => {
        const exit = { code, signal };
        this.lastExit = exit;
        this.options.onExit(this, exit);
        resolve(exit);
      });
    });
  }

  /**
   * Polls `/readyz` until it answers 200.
   * @throws WorkerStartError when the process exits first or `timeoutMilliseconds` pass
   */
  async waitReady(timeoutMilliseconds: number): Promise<void> {
    const deadline = Date.now() + timeoutMilliseconds;
    let lastAnswer = 'no answer yet';
    while (Date.now() < deadline) {
      if (this.lastExit) {
        throw new WorkerStartError(
          this.name,
          describeExit(this.lastExit),
          this.lastLines().slice(-15),
          this.lastExit.code,
        );
      }
      try {
        if (this.httpPort === 0) {
          const found = this.pid !== null ? await this.options.findHttpPort?.(this.pid) : null;
          if (!found) throw new Error('its health port is not known yet (start-up not finished)');
          this.httpPort = found;
        }
        const response = await fetch(`${this.baseUrl}/readyz`, { signal: AbortSignal.timeout(2000) });
        const body = await response.text();
        if (response.status === 200) return;
        lastAnswer = `HTTP ${response.status} ${body.slice(0, 300)}`;
      } catch (error) {
        lastAnswer = (error as Error).message;
      }
      await Promise.race([delay(200), this.exited]);
    }
    throw new WorkerStartError(
      this.name,
      `was not ready within ${timeoutMilliseconds / 1000} s (${this.baseUrl}/readyz: ${lastAnswer})`,
      this.lastLines().slice(-15),
    );
  }

  /** Sends a signal to the process (not to its children). */
  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (this.running) this.child?.kill(signal);
  }

  /**
   * SIGTERM, then SIGKILL when it has not ended after `killAfterMilliseconds`.
   * @returns how it ended
   */
  async stop(killAfterMilliseconds: number): Promise<WorkerExit> {
    if (!this.running) return this.lastExit ?? { code: null, signal: null };
    this.stopping = true;
    this.kill('SIGTERM');
    const timer = setTimeout(() => {
      this.killedByStop = true;
      this.kill('SIGKILL');
    }, killAfterMilliseconds);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
