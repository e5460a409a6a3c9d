import { exponentialBackoff } from '@lifeguard/runtime';
import type { ResolvedStackOptions } from './stack-options.ts';
import { describeExit, type WorkerExit } from './worker-process.ts';

/** What the restart policy needs of a process the launcher runs: a worker, or the console. */
export interface RestartedProcess {
  /** `fencing-worker`, `evacuation-worker-2`, `console`, ... */
  readonly name: string;
  /** When it was last started (Date.now() milliseconds), or null. */
  readonly startedAt: number | null;
}

/** A restarted worker that runs this long (milliseconds) counts as recovered: its restart count starts over. */
const RECOVERED_AFTER_MILLISECONDS = 60_000;
/** The longest wait (milliseconds) before an automatic restart. */
const LONGEST_RESTART_DELAY_MILLISECONDS = 30_000;

type Log = (level: 'info' | 'warn' | 'error', message: string) => void;

/**
 * The launcher's answer to a worker that ends unexpectedly (`npm start`'s restart policy): without a
 * policy it is reported and the others go on; with one, the worker is started again after a delay
 * that doubles from `firstDelayMilliseconds` (at most 30 s), up to `attempts` restarts in a row (a
 * worker that then runs for 60 s starts the count over); after the last attempt it is left down with
 * an error saying so. The console the launcher runs follows the same policy with its own instance.
 */
export class WorkerRestarts<Process extends RestartedProcess = RestartedProcess> {
  /** Per worker name: automatic restarts in a row and the pending one's timer. */
  private readonly restarts = new Map<string, { count: number; timer: NodeJS.Timeout | null }>();

  constructor(
    private readonly policy: ResolvedStackOptions['restartWorkers'],
    /** Starts the worker again (its own errors are its to report). */
    private readonly restart: (worker: Process) => Promise<void>,
    private readonly log: Log,
  ) {}

  /** Called for each unexpected exit of a worker. */
  workerEnded(worker: Process, exit: WorkerExit): void {
    const { policy } = this;
    const how = `${worker.name} ${describeExit(exit)}`;
    if (!policy) {
      this.log('error', `${how}; the other workers go on`);
      return;
    }
    const state = this.restarts.get(worker.name) ?? { count: 0, timer: null };
    this.restarts.set(worker.name, state);
    if (worker.startedAt !== null && Date.now() - worker.startedAt >= RECOVERED_AFTER_MILLISECONDS)
      state.count = 0;
    if (state.count >= policy.attempts) {
      this.log(
        'error',
        `${how}; it is not restarted again: it ended ${state.count + 1} times in a row ` +
          `(${policy.attempts} restarts allowed). It stays down while the other workers go on: ` +
          'start it by hand (docs/operations.md, "One worker by hand") or restart lifeguard',
      );
      return;
    }
    state.count++;
    const delay = exponentialBackoff(
      policy.firstDelayMilliseconds,
      state.count - 1,
      LONGEST_RESTART_DELAY_MILLISECONDS,
    );
    this.log(
      'warn',
      `${how}; restarting it in ${delay / 1000} s (restart ${state.count} of ${policy.attempts})`,
    );
    state.timer = setTimeout(() => {
      state.timer = null;
      void this.restart(worker);
    }, delay);
  }

  /** Cancels every pending restart (the stack is stopping). */
  cancel(): void {
    for (const state of this.restarts.values()) {
      if (state.timer) clearTimeout(state.timer);
      state.timer = null;
    }
  }
}
