/**
 * Exponential back-off: `initial × 2^doublings`, capped at `maximum` (both in the caller's unit,
 * milliseconds or seconds). `doublings` below 0 count as 0 and above 30 as 30, so a long run of
 * failures never overflows. Jitter, when wanted, is the caller's (e.g. the OpenStack retry policy).
 *
 *     exponentialBackoff(1000, 0, 60_000) // 1000
 *     exponentialBackoff(1000, 3, 60_000) // 8000
 *     exponentialBackoff(1000, 9, 60_000) // 60000
 */
export function exponentialBackoff(initial: number, doublings: number, maximum: number): number {
  const exponent = Math.min(Math.max(doublings, 0), 30);
  return Math.min(initial * 2 ** exponent, maximum);
}
