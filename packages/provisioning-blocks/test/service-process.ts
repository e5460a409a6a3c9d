import { type ChildProcess, spawn } from 'node:child_process';
import { lifeguardEntryPoint, REDIS_URL, waitFor, withoutNodeOptions } from '@lifeguard/testing';

/** The provisioning service running as its own process (see lifeguardEntryPoint), with its JSON log lines. */
export class ServiceProcess {
  readonly lines: Array<Record<string, unknown>> = [];
  readonly stderr: string[] = [];
  private exitStatus: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(readonly child: ChildProcess) {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      let newline = buffer.indexOf('\n');
      while (newline >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        try {
          this.lines.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          this.stderr.push(line);
        }
        newline = buffer.indexOf('\n');
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => this.stderr.push(chunk.toString('utf8')));
    this.exitStatus = new Promise((done) => child.on('exit', (code, signal) => done({ code, signal })));
  }

  /** Starts the service's main with `env` added to this process's environment (LIFEGUARD_LOG_LEVEL info). */
  static start(env: Record<string, string>): ServiceProcess {
    const child = spawn(process.execPath, lifeguardEntryPoint('provisioning-blocks'), {
      env: {
        ...withoutNodeOptions(process.env),
        LIFEGUARD_REDIS_URL: REDIS_URL,
        LIFEGUARD_LOG_LEVEL: 'info',
        LIFEGUARD_HTTP_PORT: '0',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new ServiceProcess(child);
  }

  /** Resolves once the process logged `provisioning-blocks started`; returns its health/metrics port. */
  async started(timeoutMilliseconds = 30_000): Promise<number> {
    await waitFor(
      'the service to start',
      () => {
        if (this.child.exitCode !== null)
          throw new Error(`exited ${this.child.exitCode}: ${this.stderr.join('')}`);
        return this.lines.some((line) => line.msg === 'provisioning-blocks started');
      },
      timeoutMilliseconds,
    );
    const listening = this.lines.find((line) => line.msg === 'health and metrics server listening');
    return Number(listening?.port);
  }

  /** Waits for the process to end. */
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    return this.exitStatus;
  }

  /** Sends SIGKILL (no shutdown at all) and waits for the end. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exitStatus;
  }
}
