import type { DisabledReasonMarker } from '../markers/disabled-reason.ts';

/** What the LEAVE_DISABLED rule reads of one compute service. */
export interface LeaveDisabledInput {
  /** LEAVE_DISABLED (config.yaml). */
  readonly leaveDisabled: boolean;
  /** The compute service's `status` as Nova lists it (`enabled`, `disabled`). */
  readonly status: string;
  /** Its `disabled_reason` parsed. */
  readonly marker: Pick<DisabledReasonMarker, 'kind'>;
}

/**
 * LEAVE_DISABLED (docs/instance-ha-rules.md#leave_disabled): with it, a host that lifeguard evacuated —
 * disabled, with the `evacuation complete` marker — stays disabled and forced down for a person to
 * re-enable. An enabled host that is still forced down is not held by this rule. The node monitor
 * asks it before requesting a host's recovery, and the evacuation worker's re-enable rules before
 * touching the host.
 * @returns true when the host is to be left disabled
 */
export function leftDisabled(input: LeaveDisabledInput): boolean {
  return input.leaveDisabled && input.status.includes('disabled') && input.marker.kind === 'complete';
}
