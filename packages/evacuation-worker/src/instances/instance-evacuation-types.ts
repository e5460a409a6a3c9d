import type { TargetHostUse } from '@lifeguard/contracts';
import type { ClaimAnswer } from '@lifeguard/runtime';
import type { EvacuationPolicy } from '../policy/evacuation-policy.ts';
import type { HostRecheck } from './host-recheck.ts';

export { MAX_CONSECUTIVE_API_ERRORS } from '../policy/evacuation-policy.ts';

/** The `locked_reason` lifeguard sets on an instance while evacuating it (2.73+). */
export const EVACUATION_LOCK_REASON = 'lifeguard-evacuation';

/** Timing and limits of one instance's evacuation (InstanceHA's keys and constants, docs/instance-ha-rules.md#constants). */
export interface InstanceEvacuationSettings {
  /** SMART_EVACUATION / ORCHESTRATED_RESTART, EVACUATION_RETRIES, EVACUATION_TIMEOUT and what they decide. */
  readonly policy: EvacuationPolicy;
  /** Wait after an accepted evacuate before the first look, in milliseconds (InstanceHA: 10000). */
  readonly firstCheckMilliseconds: number;
  /** Wait between two looks, in milliseconds (InstanceHA: 5000). */
  readonly pollMilliseconds: number;
  /** `changes-since` window of migration queries, in minutes (see migrationWindowMinutes). */
  readonly migrationWindowMinutes: number;
}

/** The instance to evacuate and the incident it belongs to. */
export interface InstanceEvacuationTarget {
  readonly instanceId: string;
  readonly instanceName: string;
  readonly failedHost: string;
  /** ACTIVE, SHUTOFF, ERROR (REBUILD when resuming). */
  readonly originalStatus: string;
  /** A reserved host to send as the evacuate `host` (FORCE_RESERVED_HOST_EVACUATION, a segment's), or null. */
  readonly targetHost: string | null;
  /** Which requests name `targetHost` (evacuateTarget); default `first-attempt`. */
  readonly targetHostUse?: TargetHostUse;
  /** When the host was fenced: migrations older than this (less a clock-skew allowance) are not this incident's. */
  readonly fencedAt: Date;
}

/** What survives a crash or a retry of the job (stored as the job's progress). */
export interface InstanceEvacuationProgress {
  /** Evacuate requests sent (accepted or refused). */
  readonly attempts: number;
  /** Failed attempts so far (EVACUATION_RETRIES counts these). */
  readonly errors: number;
  /** An accepted evacuate whose outcome was not yet seen. */
  readonly awaitingResult: boolean;
  /** When watching started (ISO 8601): EVACUATION_TIMEOUT counts from here, across restarts. */
  readonly startedAt: string | null;
  /** The last evacuate's Nova request id. */
  readonly novaRequestId: string | null;
}

export const NO_PROGRESS: InstanceEvacuationProgress = {
  attempts: 0,
  errors: 0,
  awaitingResult: false,
  startedAt: null,
  novaRequestId: null,
};

export interface InstanceEvacuationContext {
  /** Aborted at shutdown: the evacuation stops waiting and throws EvacuationInterruptedError. */
  readonly signal?: AbortSignal;
  readonly progress: InstanceEvacuationProgress;
  /** Persists progress (the job's progress); awaited before each next step. */
  saveProgress(progress: InstanceEvacuationProgress): Promise<void>;
  /** True when the host's evacuation already stopped on a failed instance: do not start this one. */
  shouldStop(): Promise<boolean>;
  /**
   * Looks at the world again just before each evacuate request (first, retry, after a takeover):
   * the gates of the host's first decision, now (see recheckHost). Absent: go.
   */
  recheckHost?(): Promise<HostRecheck>;
  /**
   * Puts the reserved host into service before the first request that names it, when it is held
   * but not enabled yet (a segment's auto_priority). @returns false when it cannot take servers: the
   * request then goes to the scheduler. Absent: the host is ready.
   */
  prepareTarget?(host: string): Promise<boolean>;
  /**
   * Just before each evacuate request, after the re-check: checks that this run still holds its job's
   * lock (else throws, and nothing is sent) and takes the instance's evacuate claim for this run
   * (evacuateClaimVerdict says what its answer allows). Absent: the claim is this run's.
   */
  claimEvacuate?(): Promise<ClaimAnswer>;
  /** Called after each accepted evacuate (metrics). */
  onAccepted?(requestId: string | null): void;
  /** Called after each evacuate Nova refused (metrics). */
  onRefused?(requestId: string | null): void;
}

export interface InstanceEvacuationResult {
  readonly outcome: 'evacuated' | 'already-evacuated' | 'accepted' | 'skipped' | 'deleted';
  /** The host the instance runs on now, when known. */
  readonly host: string | null;
  readonly migrationStatus: string | null;
  readonly attempts: number;
  readonly novaRequestId: string | null;
}
