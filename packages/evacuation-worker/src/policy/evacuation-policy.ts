import type { EvacuationMode } from '@lifeguard/contracts';
import type { InstanceHaConfig } from '@lifeguard/instance-ha';

/**
 * Consecutive Nova API errors while watching (or verifying) one instance that end it (InstanceHA's
 * constant, docs/instance-ha-rules.md#constants).
 */
export const MAX_CONSECUTIVE_API_ERRORS = 10;

/** The config.yaml keys the evacuation policy is made of. */
export type EvacuationPolicyConfig = Pick<
  InstanceHaConfig,
  'smartEvacuation' | 'orchestratedRestart' | 'evacuationRetries' | 'evacuationTimeoutSeconds'
>;

/**
 * How the evacuation worker evacuates a fenced host's instances, in one place: every question the
 * worker asks about the mode is answered here by name (docs/instance-ha-rules.md#evacuation-policy).
 * Made by evacuationPolicy from config.yaml; the worker never tests the mode itself.
 */
export interface EvacuationPolicy {
  /**
   * `traditional` (SMART_EVACUATION and ORCHESTRATED_RESTART off), `smart` (SMART_EVACUATION) or
   * `orchestrated` (ORCHESTRATED_RESTART, which implies SMART_EVACUATION's tracking), as events and logs
   * name it (docs/instance-ha-rules.md#evacuation, #smart_evacuation, #orchestrated_restart).
   */
  readonly mode: EvacuationMode;
  /**
   * EVACUATION_RETRIES: failed attempts (a refused evacuate, a failed migration, no record while the
   * server sits idle on the failed host) after which a followed evacuation fails
   * (docs/instance-ha-rules.md#smart_evacuation, step 4). Unused when failedAttempt is `fails-instance`.
   */
  readonly retries: number;
  /**
   * EVACUATION_TIMEOUT in seconds: how long an instance may take to land on another host, counted from
   * its first evacuate when followed to completion, from the start of the host's verification otherwise
   * (docs/instance-ha-rules.md#smart_evacuation, step 4; #evacuation, traditional mode).
   */
  readonly timeoutSeconds: number;
  /**
   * Consecutive failed reads of one instance that fail it, in every mode (InstanceHA's constant
   * MAX_CONSECUTIVE_API_ERRORS, docs/instance-ha-rules.md#constants).
   */
  readonly maxConsecutiveApiErrors: number;
  /**
   * Whether the instance job follows an evacuation to its end: watches the migration until the server is
   * idle on another host, restores its state (SHUTOFF → `os-stop`, ERROR → reset) and judges
   * EVACUATION_TIMEOUT itself. True in smart and orchestrated mode ("each server is followed to the
   * end", docs/instance-ha-rules.md#smart_evacuation); false in traditional mode, where InstanceHA sends
   * one request per server and does not wait (docs/instance-ha-rules.md#evacuation): the instance job is
   * done when Nova accepts, and the host job's verification reads, restores and times the instance
   * instead. Also: whether a child reporting `already-evacuated` already saw the instance settled.
   */
  readonly followsEvacuationToCompletion: boolean;
  /**
   * Whether the instance stays locked once Nova accepted its evacuate (or it is found already
   * evacuated): true in traditional mode only, where the host job's verification restores the state and
   * then unlocks it; a followed evacuation unlocks when it ends. InstanceHA unlocks "at the end, whatever
   * happened" (docs/instance-ha-rules.md#evacuation, "Restoring the state"), which in traditional mode
   * is the end of the verification.
   */
  readonly keepsLockAfterAcceptance: boolean;
  /**
   * Which job announces `instance.evacuated`: the instance job once the followed evacuation settled
   * (smart, orchestrated), or the host job's verification once it saw the instance settled
   * (traditional, where the instance job ends at Nova's accept). Either way only an instance idle on
   * another host in its original state is announced (docs/instance-ha-rules.md#evacuation-policy).
   */
  readonly instanceEvacuatedAnnouncedBy: 'instance-job' | 'host-verification';
  /**
   * What a failed attempt (a refused evacuate, a failed migration, a retried job finding the accepted
   * evacuate went nowhere) does: `retried` — reset to `error` and evacuated again without a target host
   * until EVACUATION_RETRIES attempts failed (docs/instance-ha-rules.md#smart_evacuation, steps 3–4) —
   * or `fails-instance` at once (traditional: "not accepted is a failure", one request per server,
   * docs/instance-ha-rules.md#evacuation).
   */
  readonly failedAttempt: 'retried' | 'fails-instance';
  /**
   * Whether a failed instance stops the host's evacuation: raises the incident's stop flag, so no other
   * instance of the host sends its first evacuate and no later phase is started. True in smart and
   * orchestrated mode; false in traditional mode, where the other instances go on. InstanceHA marks the
   * host FAILED after a failed server (docs/instance-ha-rules.md#smart_evacuation) but runs later phases
   * anyway (#orchestrated_restart); lifeguard stops them (docs/evacuation-worker.md#modes).
   */
  readonly failedInstanceStopsHost: boolean;
  /**
   * How the host's instances are split into phases, run one after the other (each phase's children
   * end before the next phase is added): `one` phase holding every instance (traditional, smart), or
   * `restart-priority` phases by `instanceha:restart_group` / `instanceha:restart_priority`
   * (docs/instance-ha-rules.md#orchestrated_restart).
   */
  readonly phases: 'one' | 'restart-priority';
}

/** SMART_EVACUATION / ORCHESTRATED_RESTART → the mode (orchestrated wins; it implies tracking). */
export function evacuationMode(
  config: Pick<InstanceHaConfig, 'smartEvacuation' | 'orchestratedRestart'>,
): EvacuationMode {
  if (config.orchestratedRestart) return 'orchestrated';
  return config.smartEvacuation ? 'smart' : 'traditional';
}

/**
 * The evacuation policy of a config.yaml (docs/instance-ha-rules.md#evacuation-policy): the mode of
 * SMART_EVACUATION and ORCHESTRATED_RESTART, EVACUATION_RETRIES and EVACUATION_TIMEOUT, and each answer
 * derived from them (see EvacuationPolicy). Pure; the result is frozen.
 */
export function evacuationPolicy(config: EvacuationPolicyConfig): EvacuationPolicy {
  const mode = evacuationMode(config);
  const followed = mode !== 'traditional';
  return Object.freeze({
    mode,
    retries: config.evacuationRetries,
    timeoutSeconds: config.evacuationTimeoutSeconds,
    maxConsecutiveApiErrors: MAX_CONSECUTIVE_API_ERRORS,
    followsEvacuationToCompletion: followed,
    keepsLockAfterAcceptance: !followed,
    instanceEvacuatedAnnouncedBy: followed ? 'instance-job' : 'host-verification',
    failedAttempt: followed ? 'retried' : 'fails-instance',
    failedInstanceStopsHost: followed,
    phases: mode === 'orchestrated' ? 'restart-priority' : 'one',
  });
}
