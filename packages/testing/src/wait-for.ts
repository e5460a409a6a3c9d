/**
 * Polls `probe` until it returns a value other than undefined/false, and returns that value.
 * @param timeoutMilliseconds give up after this long (default 10000)
 * @param intervalMilliseconds wait between probes (default 50)
 * @throws Error naming `what` when the time runs out
 */
export async function waitFor<Value>(
  what: string,
  probe: () => Value | undefined | false | Promise<Value | undefined | false>,
  timeoutMilliseconds = 10_000,
  intervalMilliseconds = 50,
): Promise<Value> {
  const deadline = Date.now() + timeoutMilliseconds;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMilliseconds} ms waiting for ${what}`, { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMilliseconds));
  }
}

/** Resolves after `milliseconds`. */
export const sleep = (milliseconds: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, milliseconds));
