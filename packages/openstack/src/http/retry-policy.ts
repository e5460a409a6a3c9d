import { exponentialBackoff } from '@lifeguard/runtime';

/**
 * When a failed OpenStack call is tried again, and how long to wait between attempts.
 *
 * Retried, for every method (the request certainly did nothing, or the service asked to come back):
 * - connection failures before the request was sent: ECONNREFUSED, ENOTFOUND, EAI_AGAIN,
 *   EHOSTUNREACH, ENETUNREACH, connect timeouts;
 * - HTTP 503 (Service Unavailable: the API or its proxy did not handle the request);
 * - HTTP 409 when Nova means "try later": `InstanceInvalidState` for a task in progress
 *   ("Cannot 'stop' instance <id> while it is in task_state rebuilding") — the task ends on its own —
 *   and messages asking to retry ("... Please retry", "try again"). Other 409s (a vm_state that does
 *   not allow the action, a locked instance) are final and thrown at once.
 *
 * Retried only for idempotent methods (GET, PUT, DELETE, HEAD), since the request may have been
 * handled: connection resets after sending, response timeouts, HTTP 502 and 504. A POST such as
 * evacuate is never repeated after it may have reached Nova: a second evacuate of the same instance
 * could start a second rebuild (callers check migrations instead).
 */
export interface RetryPolicy {
  /** Attempts in total, the first included (1 = no retry). */
  attempts: number;
  /** First back-off delay in milliseconds; doubles per attempt, with jitter between 50% and 100%. */
  baseDelayMilliseconds: number;
  /** Upper bound of one back-off delay in milliseconds (also caps a `Retry-After` header). */
  maxDelayMilliseconds: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = {
  attempts: 4,
  baseDelayMilliseconds: 250,
  maxDelayMilliseconds: 5_000,
};

const CONNECT_PHASE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** The error code under a network failure (`ECONNREFUSED`, `ECONNRESET`, ...), or null. */
export function networkErrorCode(error: unknown): string | null {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/** True when a call failed before the request could reach the server (safe to send again). */
export function failedBeforeSending(error: unknown): boolean {
  const code = networkErrorCode(error);
  return code !== null && CONNECT_PHASE_CODES.has(code);
}

/** True for HTTP statuses worth another attempt for this kind of request (see RetryPolicy). */
export function isRetryableStatus(status: number, idempotent: boolean): boolean {
  if (status === 503) return true;
  return idempotent && (status === 502 || status === 504);
}

/** True when a 409's message says the conflict ends by itself (see RetryPolicy). */
export function isTransientConflict(message: string): boolean {
  if (/while it is in task_state (?!None\b)\S+/.test(message)) return true;
  return /please retry|try again/i.test(message);
}

/**
 * Delay before attempt `attempt + 1` (attempt counts from 1), in milliseconds: exponential with
 * jitter; or, when the server sent `Retry-After` seconds, that long (at most the maximum) and then up
 * to as long again at random. `Retry-After` is the least the server asks for (RFC 9110,
 * section 10.2.3); the random part keeps callers that were told the same seconds from coming back in
 * step with each other, or with a caller that runs on a fixed period (the node monitor's POLL).
 */
export function backoffDelay(policy: RetryPolicy, attempt: number, retryAfterHeader?: string | null): number {
  if (retryAfterHeader && /^\d+$/.test(retryAfterHeader.trim())) {
    const asked = Math.min(Number(retryAfterHeader.trim()) * 1000, policy.maxDelayMilliseconds);
    return Math.round(asked * (1 + Math.random()));
  }
  const exponential = exponentialBackoff(
    policy.baseDelayMilliseconds,
    attempt - 1,
    policy.maxDelayMilliseconds,
  );
  return Math.round(exponential * (0.5 + Math.random() * 0.5));
}
