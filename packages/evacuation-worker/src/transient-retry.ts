import { exponentialBackoff } from '@lifeguard/runtime';

/** Unexpected errors (Nova or Redis unreachable) are retried this many times in a row with back-off. */
export const MAX_TRANSIENT_FAILURES = 30;

/** The wait before retrying after the `failures`-th error in a row: 1 s, doubling, at most 60 s. */
export function transientRetryDelayMilliseconds(failures: number): number {
  return exponentialBackoff(1000, failures - 1, 60_000);
}
