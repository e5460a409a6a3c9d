/**
 * Where a long action stands, one step at a time: a step starts, its text changes while it runs, and
 * it ends done or failed. The `lifeguard` command shows a spinner or plain lines (its Progress); the
 * console, which answers once the action ended, shows nothing (QUIET_PROGRESS).
 */
export interface StepProgress {
  /** Starts a step (ending any step still running as done). */
  start(text: string): void;
  /** Changes the running step's text. */
  update(text: string): void;
  /** Ends the running step as done (with `text`, else the step's own). */
  succeed(text?: string): void;
  /** Ends the running step as failed. */
  fail(text?: string): void;
}

/** Progress nobody watches. */
export const QUIET_PROGRESS: StepProgress = {
  start: () => undefined,
  update: () => undefined,
  succeed: () => undefined,
  fail: () => undefined,
};
