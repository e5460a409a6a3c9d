import type { Logger } from '@lifeguard/runtime';
import type { FenceMethod } from '../configuration/fence-methods.ts';
import { FencingError } from '../errors.ts';

/** A host's power as its BMC reports it. */
export type PowerState = 'on' | 'off';

/** How a confirmed power-off went. */
export interface PowerOffOutcome {
  /** The BMC said the host was already off ("already off" answers, `Success: Already OFF`). */
  alreadyOff: boolean;
  /** Power commands sent (1 unless retried). */
  attempts: number;
  /** True when the off state was read back from the BMC; false only for `noop`, which touches nothing. */
  verified: boolean;
}

/**
 * One fencing method of one host. `powerOff` resolves only once the power state has been READ as
 * off (a command that was merely accepted is not enough): that read is what lets a host be evacuated.
 * Every method throws FencingError; its `kind` tells whether retrying can help.
 */
export interface FenceDriver {
  readonly method: FenceMethod;
  /** Powers off and confirms the off state within the method's timeout. */
  powerOff(): Promise<PowerOffOutcome>;
  /** Powers on (no wait for the boot). */
  powerOn(): Promise<void>;
  powerStatus(): Promise<PowerState>;
  /**
   * The BMC's identity, normalised to 32 lower-case hex digits: the Redfish system `UUID` or the IPMI
   * GUID. Throws FencingError (`configuration`) for methods that cannot report one.
   */
  readIdentity(): Promise<string>;
}

/** Waits between attempts and polls; the defaults are InstanceHA's (docs/instance-ha-rules.md#fence-agents). */
export interface DriverTiming {
  /** Wait before the 2nd and 3rd attempt of a command, in milliseconds (default [1000, 2000]). */
  retryDelaysMilliseconds: ReadonlyArray<number>;
  /** Wait between power-state reads while confirming, in milliseconds (default 1000). */
  pollIntervalMilliseconds: number;
}

export const DEFAULT_DRIVER_TIMING: DriverTiming = {
  retryDelaysMilliseconds: [1000, 2000],
  pollIntervalMilliseconds: 1000,
};

/** What every driver receives besides its method. */
export interface DriverContext {
  logger: Logger;
  /** Every secret that must never leave the process (all of fencing.yaml's passwords). */
  secrets: ReadonlyArray<string>;
  timing?: DriverTiming;
}

export const sleep = (milliseconds: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, milliseconds));

/**
 * Runs `attempt` up to 1 + retryDelays.length times (3 by default), waiting the given delays between
 * tries, as InstanceHA retries its fencing commands. Errors that are not recoverable (credentials,
 * identity, configuration) end the loop at once.
 * @returns the successful result and the number of attempts made
 * @throws the last FencingError
 */
export async function withRetries<Result>(
  what: string,
  context: DriverContext,
  attempt: (attemptNumber: number) => Promise<Result>,
): Promise<{ result: Result; attempts: number }> {
  const delays = (context.timing ?? DEFAULT_DRIVER_TIMING).retryDelaysMilliseconds;
  for (let number = 1; ; number++) {
    try {
      return { result: await attempt(number), attempts: number };
    } catch (error) {
      const fencingError =
        error instanceof FencingError
          ? error
          : new FencingError('agent-failed', String((error as Error)?.message ?? error));
      const delay = delays[number - 1];
      if (!fencingError.recoverable || delay === undefined) throw fencingError;
      context.logger.warn(
        {
          attempt: number,
          kind: fencingError.kind,
          reason: fencingError.message,
          retryInMilliseconds: delay,
        },
        `${what} failed; retrying`,
      );
      await sleep(delay);
    }
  }
}

/**
 * Reads the power state every poll interval until it is off or `timeoutSeconds` have passed.
 * Credentials errors end the wait at once; other read errors are retried until the deadline.
 * @throws FencingError `not-confirmed` at the deadline, naming the last power state read (`power
 *   state still on`) — and the read that failed after it, if any — so that a device that said "on"
 *   and then stopped answering in time is not reported as one that was never read
 */
export async function confirmPowerOff(
  what: string,
  timeoutSeconds: number,
  context: DriverContext,
  readState: (remainingMilliseconds: number) => Promise<PowerState>,
): Promise<void> {
  const interval = (context.timing ?? DEFAULT_DRIVER_TIMING).pollIntervalMilliseconds;
  const deadline = Date.now() + timeoutSeconds * 1000;
  let lastState: PowerState | null = null;
  let lastError: string | null = null;
  for (;;) {
    const remaining = deadline - Date.now();
    try {
      const state = await readState(Math.max(remaining, 1000));
      if (state === 'off') return;
      lastState = state;
      lastError = null;
    } catch (error) {
      if (error instanceof FencingError && !error.recoverable) throw error;
      lastError = (error as Error).message;
    }
    if (Date.now() + interval > deadline) {
      const last =
        lastState === null
          ? (lastError ?? 'no power state read')
          : `power state still ${lastState}${lastError === null ? '' : `; the read after it failed: ${lastError}`}`;
      throw new FencingError(
        'not-confirmed',
        `${what}: power off not confirmed within ${timeoutSeconds} s (${last})`,
      );
    }
    await sleep(interval);
  }
}
