import type { Logger } from 'pino';

export interface ShutdownStep {
  name: string;
  run: () => Promise<void> | void;
}

export interface ShutdownOptions {
  logger: Logger;
  /** The whole sequence's budget in seconds; after it the process exits with status 1. */
  timeoutSeconds: number;
  /** Called to end the process (tests replace it); default `process.exit`. */
  exit?: (code: number) => void;
}

/**
 * Graceful shutdown on SIGTERM and SIGINT: runs the registered steps in order (each step's failure
 * is logged and the next still runs), within an overall time budget — BullMQ's `close()` can hang
 * forever when Redis is unreachable, so the budget ends the process regardless. A second signal exits
 * at once with status 1.
 */
export class GracefulShutdown {
  private readonly steps: ShutdownStep[] = [];
  private running: Promise<void> | null = null;
  private readonly onSignal = (signal: NodeJS.Signals) => {
    if (this.running) {
      this.options.logger.warn({ signal }, 'second signal: exiting now');
      this.exit(1);
      return;
    }
    void this.shutdown(signal);
  };

  constructor(private readonly options: ShutdownOptions) {}

  private exit(code: number): void {
    (this.options.exit ?? ((status: number) => process.exit(status)))(code);
  }

  /** Adds a step; steps run in the order they were added. */
  add(name: string, run: () => Promise<void> | void): this {
    this.steps.push({ name, run });
    return this;
  }

  /** Listens for SIGTERM and SIGINT. */
  install(): this {
    process.on('SIGTERM', this.onSignal);
    process.on('SIGINT', this.onSignal);
    return this;
  }

  /** True once shutdown began. */
  get inProgress(): boolean {
    return this.running !== null;
  }

  /**
   * Runs the shutdown sequence once (later calls return the same promise), then exits.
   * @param exitCode the exit status once the steps ran (default 0; a fatal error passes its own)
   */
  shutdown(reason: string, exitCode = 0): Promise<void> {
    if (this.running) return this.running;
    const { logger, timeoutSeconds } = this.options;
    logger.info({ reason, timeoutSeconds }, 'shutting down');
    let current: string | null = null;
    const deadline = setTimeout(() => {
      logger.error(
        { timeoutSeconds, step: current },
        `shutdown did not finish in time (step "${current}" still running); exiting`,
      );
      this.exit(1);
    }, timeoutSeconds * 1000);
    deadline.unref();
    this.running = (async () => {
      for (const step of this.steps) {
        current = step.name;
        try {
          await step.run();
        } catch (error) {
          logger.warn({ err: error, step: step.name }, 'shutdown step failed');
        }
      }
      clearTimeout(deadline);
      logger.info('shutdown complete');
      logger.flush?.();
      this.exit(exitCode);
    })();
    return this.running;
  }
}

/**
 * Resolves with `work`'s result, or rejects after `timeoutMilliseconds` with an Error naming `what`.
 * For close() calls that may never settle (BullMQ worker close with Redis gone).
 */
export async function withTimeout<Result>(
  what: string,
  work: Promise<Result>,
  timeoutMilliseconds: number,
): Promise<Result> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${what} did not finish within ${timeoutMilliseconds} ms`)),
          timeoutMilliseconds,
        );
      }),
    ]);
  } finally {
    if (timer) clearTimeout(timer);
  }
}
