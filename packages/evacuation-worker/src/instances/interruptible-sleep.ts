import { EvacuationInterruptedError } from '../errors.ts';

/** @throws EvacuationInterruptedError when the job's signal was aborted (shutdown) */
export function throwIfInterrupted(instanceId: string, signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new EvacuationInterruptedError(instanceId);
}

/**
 * Waits `milliseconds`, or less when the signal aborts (shutdown).
 * @throws EvacuationInterruptedError (as a rejection) when the signal aborts before or during the wait
 */
export function sleep(
  milliseconds: number,
  instanceId: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  throwIfInterrupted(instanceId, signal);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new EvacuationInterruptedError(instanceId));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, milliseconds);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
