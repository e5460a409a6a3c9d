// What every benchmark shares: the smoke mode (BENCH_SMOKE=1, or `npm run bench -- <name> --smoke`:
// small sizes, one round, for `npm test`), a time limit (BENCH_TIME_LIMIT_SECONDS) after which the
// benchmark fails naming the phase it was waiting for, and clean-up of what it created (vhosts, Redis
// keys, child processes) on every way out: the end, an error, SIGINT, SIGTERM and the time limit.

/** True in smoke mode: BENCH_SMOKE=1 (set by `npm run bench -- ... --smoke`). */
export const SMOKE = process.env.BENCH_SMOKE === '1' || process.argv.includes('--smoke');

/**
 * True in cluster mode: BENCH_CLUSTER=1 (set by `npm run bench -- ... --cluster`). A benchmark that has
 * one measures on the single engines first, then on clusters it starts (see cluster-engines.ts).
 */
export const CLUSTER = process.env.BENCH_CLUSTER === '1' || process.argv.includes('--cluster');

/**
 * A whole-number setting: the environment variable `name` when set, else `full` (or `smoke` in smoke
 * mode).
 * @throws Error naming the variable when its value is not a positive whole number
 */
export function setting(name: string, full: number, smoke: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return SMOKE ? smoke : full;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0)
    throw new Error(`${name} must be a positive whole number; got ${JSON.stringify(raw)}`);
  return value;
}

/** Exit status of a benchmark stopped by a signal (128 + its number), or by the time limit (1). */
const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143 } as const;

/**
 * One benchmark run. `phase(name)` says what it waits for now (named when the time limit passes);
 * `resource(label, release)` registers a clean-up and returns it as a run-once function, so the
 * benchmark's own `finally` and the signal and time-limit paths never release twice.
 */
export class BenchRun {
  private current = 'starting';
  private readonly releases: Array<{ label: string; release: () => Promise<void> }> = [];
  private readonly explanations: Array<{ label: string; explain: () => string }> = [];
  private readonly timer: NodeJS.Timeout;
  private ending = false;

  /**
   * @param name the benchmark, in messages
   * @param limitSeconds the time limit in seconds (BENCH_TIME_LIMIT_SECONDS wins)
   */
  constructor(
    readonly name: string,
    limitSeconds: number,
  ) {
    const limit = setting('BENCH_TIME_LIMIT_SECONDS', limitSeconds, limitSeconds);
    this.timer = setTimeout(() => {
      void this.abort(
        `${name} failed: the time limit of ${limit} s (BENCH_TIME_LIMIT_SECONDS) passed while ${this.current}`,
        1,
      );
    }, limit * 1000);
    this.timer.unref();
    // `on`, not `once`: Ctrl-C reaches this process and `npm run bench` passes it on as well; a
    // second signal during the clean-up must not end the process before the clean-up is done.
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.on(signal, () => {
        void this.abort(`${name} stopped by ${signal} while ${this.current}`, SIGNAL_EXIT[signal]);
      });
    }
  }

  /**
   * True once the benchmark is ending on an error, a signal or the time limit: its clean-ups have run
   * or are running, so nothing more may be started.
   */
  get stopping(): boolean {
    return this.ending;
  }

  /** Names what the benchmark does or waits for from now on (`waiting for port-status to be ready`). */
  phase(description: string): void {
    this.current = description;
  }

  /**
   * Registers what to print when the benchmark fails or is stopped (a child process's last output,
   * for example), before anything is cleaned up; an empty text prints nothing.
   */
  explainOnFailure(label: string, explain: () => string): void {
    this.explanations.push({ label, explain });
  }

  /** Registers a clean-up; the returned function runs it once (later calls do nothing). */
  resource(label: string, release: () => Promise<unknown> | unknown): () => Promise<void> {
    let released = false;
    const once = async () => {
      if (released) return;
      released = true;
      await release();
    };
    this.releases.push({ label, release: once });
    return once;
  }

  /**
   * Creates something that must be cleaned up (a vhost, a bed) with its clean-up registered before the
   * creation starts, so a signal or the time limit during the creation still cleans up what it made.
   * @returns the created value and its run-once clean-up
   * @throws Error when the benchmark is already ending (nothing is created), or whatever `create` throws
   */
  async acquire<Value>(
    label: string,
    create: () => Promise<Value>,
    release: (value: Value) => Promise<unknown> | unknown,
  ): Promise<[Value, () => Promise<void>]> {
    // Past the start of the clean-ups a new resource would never be released: create nothing.
    if (this.ending) throw new Error(`${this.name} is ending: not creating ${label}`);
    const creating = create();
    const releaseOnce = this.resource(label, async () => {
      const created = await creating.then(
        (value) => ({ value }),
        () => null,
      );
      if (created) await release(created.value);
    });
    return [await creating, releaseOnce];
  }

  /** Runs `body`, then every clean-up not yet run (newest first); exits 1 with the error if it threw. */
  async run(body: () => Promise<void>): Promise<void> {
    try {
      await body();
    } catch (error) {
      await this.abort(`${this.name} failed while ${this.current}: ${describe(error)}`, 1);
      return;
    }
    clearTimeout(this.timer);
    await this.releaseAll();
  }

  private async abort(message: string, exitStatus: number): Promise<void> {
    if (this.ending) return;
    this.ending = true;
    clearTimeout(this.timer);
    process.stderr.write(`${message}\n`);
    for (const { label, explain } of this.explanations) {
      const text = explain();
      if (text) process.stderr.write(`${label}:\n${text}\n`);
    }
    await this.releaseAll();
    process.exit(exitStatus);
  }

  private async releaseAll(): Promise<void> {
    for (const { label, release } of this.releases.reverse()) {
      try {
        await release();
      } catch (error) {
        process.stderr.write(`${this.name}: could not clean up ${label}: ${describe(error)}\n`);
      }
    }
    this.releases.length = 0;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
