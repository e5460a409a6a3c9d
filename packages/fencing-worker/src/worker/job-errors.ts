import { BACKOFF_TYPES } from '@lifeguard/contracts';
import { IncidentClosedError, IncidentNotFoundError, IncidentRecordError } from '@lifeguard/instance-ha';
import { EndpointUnreachableError, KeystoneAuthError, OpenStackApiError } from '@lifeguard/openstack';
import { exponentialBackoff } from '@lifeguard/runtime';
import type { BackoffStrategy } from 'bullmq';
import { FENCING_ERROR_KINDS, FencingError } from '../errors.ts';

/** Why a job attempt failed, as far as retrying goes: a fence agent's kinds, then Nova's, Keystone's and ours. */
export const JOB_ERROR_KINDS = [
  ...FENCING_ERROR_KINDS,
  'nova',
  'nova-unreachable',
  'openstack-credentials',
  'incident',
  'internal',
] as const;
export type JobErrorKind = (typeof JOB_ERROR_KINDS)[number];

export interface JobErrorClass {
  kind: JobErrorKind;
  /** False when retrying cannot help: the job fails at once (BullMQ UnrecoverableError). */
  recoverable: boolean;
}

/**
 * Sorts an error of a fence or power-on attempt:
 * - FencingError: its own kind (configuration, credentials and identity are not recoverable);
 * - Keystone refusing the credentials (4xx), Nova answering 401/403: `openstack-credentials`, not recoverable;
 * - other Nova errors: `nova` (recoverable; attempts bound them), unreachable Nova: `nova-unreachable`;
 * - a missing or damaged incident record: `incident`, not recoverable;
 * - anything else: `internal`, recoverable.
 */
export function classifyJobError(error: unknown): JobErrorClass {
  if (error instanceof FencingError) return { kind: error.kind, recoverable: error.recoverable };
  if (error instanceof KeystoneAuthError) {
    const refused = error.status !== null && error.status >= 400 && error.status < 500;
    return { kind: refused ? 'openstack-credentials' : 'nova-unreachable', recoverable: !refused };
  }
  if (error instanceof OpenStackApiError) {
    if (error.status === 401 || error.status === 403)
      return { kind: 'openstack-credentials', recoverable: false };
    return { kind: error.status >= 500 ? 'nova-unreachable' : 'nova', recoverable: true };
  }
  if (error instanceof EndpointUnreachableError) return { kind: 'nova-unreachable', recoverable: true };
  if (
    error instanceof IncidentNotFoundError ||
    error instanceof IncidentRecordError ||
    error instanceof IncidentClosedError
  ) {
    return { kind: 'incident', recoverable: false };
  }
  return { kind: 'internal', recoverable: true };
}

/** The kinds whose retries back off exponentially (the far side may need time to come back). */
const EXPONENTIAL: ReadonlySet<JobErrorKind> = new Set(['unreachable', 'nova-unreachable', 'internal']);

/** BullMQ backoff type of fence and power-on jobs: the wait is chosen by the error's kind. */
export const BACKOFF_BY_ERROR_KIND = BACKOFF_TYPES.byErrorKind;

/**
 * The backoff strategy (BullMQ `settings.backoffStrategy`) for jobs added with
 * `backoff: { type: 'by-error-kind' }`: an unreachable BMC or Nova, or an unexpected error, waits
 * `baseSeconds × 2^(attempt−1)` (at most `maxSeconds`); a BMC that answered but did not confirm the
 * power off, refused the action, or a fence agent that failed waits `baseSeconds` flat — the device
 * is there, so the next try can come soon. Returns milliseconds.
 */
export function backoffByErrorKind(baseSeconds: number, maxSeconds: number): BackoffStrategy {
  return (attemptsMade, _type, error) => {
    const { kind } = classifyJobError(error);
    const base = baseSeconds * 1000;
    return exponentialBackoff(base, EXPONENTIAL.has(kind) ? attemptsMade - 1 : 0, maxSeconds * 1000);
  };
}
