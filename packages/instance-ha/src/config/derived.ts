import type { InstanceHaConfig } from './instance-ha-config.ts';

/** Constants InstanceHA hard-codes (docs/instance-ha-rules.md#constants). */
export const INSTANCE_HA_CONSTANTS = {
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

/** The share of POLL a retry after a failed poll may come early by, so retries do not fall in step. */
export const POLL_RETRY_JITTER = 0.2;

/**
 * Seconds to wait after a failed poll: POLL, less up to POLL_RETRY_JITTER of it at random — never
 * more than POLL, however many polls failed. InstanceHA backs off min(POLL × 2^failures, 300 s);
 * lifeguard does not (docs/instance-ha-rules.md#where-lifeguard-differs): each poll is bounded and
 * costs Nova one listing, and a backed-off monitor is blind for minutes after Nova recovers.
 * @param random a number in [0, 1) (Math.random by default; tests pass their own)
 */
export function pollRetrySeconds(
  config: Pick<InstanceHaConfig, 'pollSeconds'>,
  random: () => number = Math.random,
): number {
  return config.pollSeconds * (1 - POLL_RETRY_JITTER * random());
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
