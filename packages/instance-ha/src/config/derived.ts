import { exponentialBackoff } from '@lifeguard/runtime';
import type { InstanceHaConfig } from './instance-ha-config.ts';

/** Constants InstanceHA hard-codes (docs/instance-ha-rules.md#constants). */
export const INSTANCE_HA_CONSTANTS = {
  /** Longest wait after poll failures, in seconds. */
  pollBackoffMaximumSeconds: 300,
  /** Consecutive poll failures after which readiness is withdrawn. */
  pollFailuresBeforeNotReady: 3,
  /** The all-services-stale breaker needs at least this many active services. */
  allServicesStaleMinimumActive: 3,
  /** Seconds after the last kdump packet before a kdump-fenced host may be re-enabled. */
  kdumpQuietPeriodSeconds: 60,
  /** The heartbeat cliff detector needs at least this many previously active hosts. */
  heartbeatCliffMinimumHosts: 3,
  /** Heartbeat timestamps are accepted from this many seconds in the past … */
  heartbeatAcceptPastSeconds: 120,
  /** … to this many seconds in the future, relative to the receiver's clock. */
  heartbeatAcceptFutureSeconds: 60,
  /** Evacuable flavor/image cache lifetime, in seconds (forced refresh when a cycle has down hosts). */
  evacuableCacheSeconds: 300,
} as const;

/**
 * Seconds to wait after `consecutiveFailures` failed polls (≥ 1): min(POLL × 2^failures, 300), as
 * InstanceHA (docs/instance-ha-rules.md#constants; the first failure already waits 2 × POLL).
 */
export function pollFailureBackoffSeconds(
  config: Pick<InstanceHaConfig, 'pollSeconds'>,
  consecutiveFailures: number,
): number {
  return exponentialBackoff(
    config.pollSeconds,
    consecutiveFailures,
    INSTANCE_HA_CONSTANTS.pollBackoffMaximumSeconds,
  );
}

/**
 * How long a host's processing may take before InstanceHA admits it again, in seconds:
 * max(FENCING_TIMEOUT, EVACUATION_TIMEOUT + (EVACUATION_MAX_THREADS − 1) × EVACUATION_STAGGER) + 30
 * (docs/instance-ha-rules.md#constants, processing entry expiry).
 */
export function processingExpirySeconds(
  config: Pick<
    InstanceHaConfig,
    'fencingTimeoutSeconds' | 'evacuationTimeoutSeconds' | 'evacuationMaxThreads' | 'evacuationStaggerSeconds'
  >,
): number {
  return (
    Math.max(
      config.fencingTimeoutSeconds,
      config.evacuationTimeoutSeconds + (config.evacuationMaxThreads - 1) * config.evacuationStaggerSeconds,
    ) + 30
  );
}

/**
 * The `changes-since` window of migration queries, in minutes:
 * max(5, floor((EVACUATION_TIMEOUT + 120) / 60)) (docs/instance-ha-rules.md#constants).
 */
export function migrationWindowMinutes(config: Pick<InstanceHaConfig, 'evacuationTimeoutSeconds'>): number {
  return Math.max(5, Math.floor((config.evacuationTimeoutSeconds + 120) / 60));
}

/** Evacuations run concurrently for one host: max(1, EVACUATION_MAX_THREADS ÷ WORKERS) (docs/instance-ha-rules.md#configuration-keys). */
export function perHostEvacuationConcurrency(
  config: Pick<InstanceHaConfig, 'evacuationMaxThreads' | 'workers'>,
): number {
  return Math.max(1, Math.floor(config.evacuationMaxThreads / config.workers));
}
