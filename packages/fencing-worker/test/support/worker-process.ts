import { type ChildProcess, spawn } from 'node:child_process';
import { lifeguardEntryPoint, REDIS_URL, waitFor } from '@lifeguard/testing';

/** A fencing worker run as its own process (see lifeguardEntryPoint), its JSON log lines collected. */
export class WorkerProcess {
  readonly lines: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(
    readonly name: string,
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

  /**
   * Starts the fencing worker's main with `env` added to a minimal environment (PATH, the runtime
   * defaults for tests).
   */
  static start(name: string, env: Record<string, string>): WorkerProcess {
    const child = spawn(process.execPath, lifeguardEntryPoint('fencing-worker'), {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        LIFEGUARD_REDIS_URL: REDIS_URL,
        LIFEGUARD_HTTP_PORT: '0',
        LIFEGUARD_INSTANCE_NAME: name,
        LIFEGUARD_LOG_LEVEL: 'debug',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new WorkerProcess(name, child);
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Every log line as one string, for "never appears" assertions. */
  get text(): string {
    return this.lines.join('\n');
  }

  /** Log lines parsed as JSON (other lines are skipped). */
  records(): Array<Record<string, unknown>> {
    return this.lines.flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  }

  /** Waits for a log record matching `predicate` and returns it. */
  waitForRecord(
    what: string,
    predicate: (record: Record<string, unknown>) => boolean,
    timeoutMilliseconds = 30_000,
  ): Promise<Record<string, unknown>> {
    return waitFor(`${this.name}: ${what}`, () => this.records().find(predicate), timeoutMilliseconds, 20);
  }

  signal(signal: NodeJS.Signals): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
  }

  /** SIGKILL (if still running) and wait for the exit. */
  async kill(): Promise<void> {
    this.signal('SIGKILL');
    await this.exited;
  }
}
