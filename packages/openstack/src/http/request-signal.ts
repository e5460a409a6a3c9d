import { AsyncLocalStorage } from 'node:async_hooks';

const scope = new AsyncLocalStorage<AbortSignal>();

/**
 * Runs `work` with every OpenStack request it makes (through any client, however deep) bounded by
 * `signal`: once it aborts, the attempt in flight is cancelled, no retry is waited for or sent, and
 * the call rejects with the signal's reason. The node monitor bounds each poll this way, so a Nova
 * that hangs costs one poll a few seconds, not the per-request timeout times the attempts.
 */
export function withRequestSignal<Result>(signal: AbortSignal, work: () => Promise<Result>): Promise<Result> {
  return scope.run(signal, work);
}

/** The signal of the innermost `withRequestSignal` around the caller, or undefined. */
export function currentRequestSignal(): AbortSignal | undefined {
  return scope.getStore();
}
