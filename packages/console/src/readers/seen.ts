/**
 * What the console could read from one source: the value, or why it could not see it (a broker down,
 * Nova unreachable, no cloud configured, a read over LIFEGUARD_CONSOLE_READ_TIMEOUT_SECONDS).
 */
export type Seen<Value> =
  | { readonly ok: true; readonly value: Value }
  | { readonly ok: false; readonly source: string; readonly reason: string };

/** Raised when a read takes longer than its limit. */
export class ReadTimeoutError extends Error {
  constructor(source: string, seconds: number) {
    super(`${source} did not answer within ${seconds} s`);
    this.name = 'ReadTimeoutError';
  }
}

/**
 * Runs `read`, giving it at most `seconds`; never throws: a failure or a timeout becomes
 * `{ ok: false, source, reason }` with the error's message.
 */
export async function see<Value>(
  source: string,
  seconds: number,
  read: () => Promise<Value>,
): Promise<Seen<Value>> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ReadTimeoutError(source, seconds)), seconds * 1000);
  });
  try {
    const value = await Promise.race([read(), limit]);
    return { ok: true, value };
  } catch (error) {
    return { ok: false, source, reason: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}
