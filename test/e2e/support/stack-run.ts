import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Stack, type StackOptions, startStack, type WorkerLogLine } from '@lifeguard/stack';
import { lifeguardProcessRun, REDIS_URL, waitFor } from '@lifeguard/testing';

/**
 * lifeguard started as users start it (`startStack`, what `npm start` runs): every worker its own
 * process (compiled, or from the TypeScript sources: see lifeguardProcessRun), on a test vhost and key prefix, health ports chosen by the
 * system, a private state directory; every output line kept.
 */
export class StackRun {
  private constructor(
    readonly stack: Stack,
    private readonly stateDirectory: string,
    /** Every line every process wrote (and the stack's own), oldest first. */
    readonly lines: WorkerLogLine[],
  ) {}

  /**
   * Starts the stack; `options` are startStack's (cloud, instanceHa, environment, ...) over the test
   * defaults (lifeguardProcessRun, free ports, only PATH/HOME/LANG/TZ inherited, no console output).
   */
  static async start(
    options: StackOptions & Required<Pick<StackOptions, 'amqpUrl' | 'keyPrefix'>>,
  ): Promise<StackRun> {
    const stateDirectory = mkdtempSync(join(tmpdir(), 'lifeguard-e2e-stack-'));
    const lines: WorkerLogLine[] = [];
    try {
      const stack = await startStack({
        redisUrl: REDIS_URL,
        stateDirectory,
        run: lifeguardProcessRun(),
        httpPorts: 'free',
        inheritEnvironment: false,
        logFormat: 'silent',
        readyTimeoutSeconds: 120,
        ...options,
        onLogLine: (line) => lines.push(line),
      });
      return new StackRun(stack, stateDirectory, lines);
    } catch (error) {
      rmSync(stateDirectory, { recursive: true, force: true });
      throw error;
    }
  }

  /** The JSON log records of one worker (`node-monitor`, `fencing-worker`, ...), oldest first. */
  records(worker: string): Array<Readonly<Record<string, unknown>>> {
    return this.lines.filter((line) => line.worker === worker && line.record).map((line) => line.record!);
  }

  /** Every output line of every process, for "never appears" assertions. */
  text(): string {
    return this.lines.map((line) => line.text).join('\n');
  }

  /**
   * Runs `body`; when it throws, every output line so far is written to a file in the system's temporary
   * folder, named on stderr (the test's output), before the error is thrown on.
   */
  async keepingLinesOnFailure<Result>(label: string, body: () => Promise<Result>): Promise<Result> {
    try {
      return await body();
    } catch (error) {
      const file = join(mkdtempSync(join(tmpdir(), 'lifeguard-stack-lines-')), `${label}.log`);
      writeFileSync(file, `${this.lines.map((line) => `${line.worker} ${line.text}`).join('\n')}\n`);
      console.error(`${label}: the stack's ${this.lines.length} output lines are in ${file}`);
      throw error;
    }
  }

  /**
   * The value of one Prometheus sample on a worker's /metrics, e.g.
   * `metric('provisioning-blocks', 'lifeguard_provisioning_commands_total', { command: 'port.create' })`;
   * 0 while the sample is not there.
   */
  async metric(worker: string, name: string, labels: Readonly<Record<string, string>> = {}): Promise<number> {
    const text = await (await fetch(`${this.stack.worker(worker).baseUrl}/metrics`)).text();
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

  /** Waits until the node monitor completed `count` more poll cycles than it had when called. */
  async pollCycles(count: number): Promise<void> {
    const cycles = () =>
      this.records('node-monitor').filter((record) =>
        String(record.msg ?? '').startsWith('Poll cycle completed'),
      ).length;
    const target = cycles() + count;
    await waitFor(`${count} more poll cycles`, () => cycles() >= target, 60_000, 100);
  }

  /** Stops every worker (and the stack's cloud-sim) and removes the state directory. */
  async stop(): Promise<void> {
    try {
      await this.stack.stop();
    } finally {
      rmSync(this.stateDirectory, { recursive: true, force: true });
    }
  }
}
