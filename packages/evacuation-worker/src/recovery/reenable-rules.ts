import { type DisabledReasonMarker, type Incident, leftDisabled } from '@lifeguard/instance-ha';
import type { ComputeService } from '@lifeguard/openstack';

export interface ReenableInput {
  /** The compute service as Nova lists it now. */
  readonly service: Pick<ComputeService, 'status' | 'state' | 'forced_down'>;
  /** Its `disabled_reason` parsed. */
  readonly marker: DisabledReasonMarker;
  /** LEAVE_DISABLED. */
  readonly leaveDisabled: boolean;
  /** FORCE_ENABLE. */
  readonly forceEnable: boolean;
  /** lifeguard set `forced_down` on this host (an incident of it with a fence record, not closed). */
  readonly forcedDownByLifeguard: boolean;
  /** Evacuations from the host still under way; null when they could not be read. Ignored with FORCE_ENABLE. */
  readonly migrationsInProgress: number | null;
  /** The last fence_kdump packet from the host, or null. */
  readonly lastKdumpPacketAt: Date | null;
  /** Seconds after the last kdump packet before re-enabling (60, docs/instance-ha-rules.md#re-enable step 3). */
  readonly kdumpQuietSeconds: number;
  /**
   * Seconds since the service's own last report (`updated_at`) at `now`, or null when Nova gave none.
   * While `forced_down` is set Nova shows the service down whatever it reports; once lifted, `up`
   * still holds for `service_down_time` after the host died: this age tells.
   */
  readonly reportAgeSeconds: number | null;
  /** DELTA in seconds: a service that last reported longer ago is not reporting (as the node monitor judges). */
  readonly deltaSeconds: number;
  readonly now: Date;
}

/** The next step of a host's re-enable. */
export type ReenableStep =
  /** Not lifeguard's to re-enable (FAILED, evacuation still under way, an operator's forced_down, ...). */
  | { kind: 'not-a-candidate'; reason: string }
  /** LEAVE_DISABLED: an evacuated host stays disabled and forced down. */
  | { kind: 'left-disabled'; reason: string }
  /** Not yet: look again later (`until` when the time is known). */
  | { kind: 'wait'; reason: string; until: Date | null }
  /** `PUT {"forced_down": false}` (Nova refuses with 400 while `done` evacuations remain: wait). */
  | { kind: 'unset-forced-down' }
  /** `PUT {"status": "enabled"}`. */
  | { kind: 'enable' }
  /** Enabled and not forced down: nothing left to do. */
  | { kind: 'reenabled' };

/**
 * The re-enable rules of docs/instance-ha-rules.md#re-enable, one step at a time:
 * - candidates: enabled + `forced_down` (only when lifeguard set it: an operator's own forced_down is
 *   never undone — InstanceHA undoes it), or disabled with an `evacuation complete` marker; a FAILED
 *   marker and an evacuation in progress (`forced_down` + down + disabled + in-progress marker) are not;
 * 1. LEAVE_DISABLED → disabled hosts with the complete marker are left alone (enabled + forced_down
 *    ones are still processed);
 * 2. unless FORCE_ENABLE: any evacuation from the host still under way → wait (unreadable → wait);
 * 3. a kdump marker → wait until 60 s after the host's last kdump packet;
 * 4. `forced_down` → unset it;
 * 5. disabled → enable once the service reports `up` and its `updated_at` is no older than DELTA (a
 *    host that died again is not enabled while Nova still shows it up), else wait.
 */
export function reenableStep(input: ReenableInput): ReenableStep {
  const { service, marker } = input;
  const disabled = service.status.includes('disabled');
  const enabled = service.status.includes('enabled');
  const forced = service.forced_down === true;
  if (marker.kind === 'failed') {
    return { kind: 'not-a-candidate', reason: 'the evacuation FAILED: a person must act' };
  }
  if (forced && service.state === 'down' && disabled && marker.kind === 'evacuating') {
    return { kind: 'not-a-candidate', reason: 'its evacuation is still in progress (or must be resumed)' };
  }
  const candidate = (enabled && forced) || (disabled && marker.kind === 'complete');
  if (!candidate) {
    if (enabled && !forced) return { kind: 'reenabled' };
    return { kind: 'not-a-candidate', reason: 'not disabled by a completed evacuation' };
  }
  if (enabled && forced && !input.forcedDownByLifeguard) {
    return {
      kind: 'not-a-candidate',
      reason: 'forced_down was not set by lifeguard: an operator’s forced_down is left alone',
    };
  }
  if (leftDisabled({ leaveDisabled: input.leaveDisabled, status: service.status, marker })) {
    return { kind: 'left-disabled', reason: 'LEAVE_DISABLED is true' };
  }
  if (!input.forceEnable) {
    if (input.migrationsInProgress === null) {
      return { kind: 'wait', reason: 'its evacuation migrations could not be read', until: null };
    }
    if (input.migrationsInProgress > 0) {
      return {
        kind: 'wait',
        reason: `${input.migrationsInProgress} evacuation(s) from it still in progress`,
        until: null,
      };
    }
  }
  if (marker.kdump && input.lastKdumpPacketAt !== null) {
    const quietUntil = new Date(input.lastKdumpPacketAt.getTime() + input.kdumpQuietSeconds * 1000);
    if (input.now < quietUntil) {
      return {
        kind: 'wait',
        reason: `its last kdump packet arrived less than ${input.kdumpQuietSeconds} s ago`,
        until: quietUntil,
      };
    }
  }
  if (forced) return { kind: 'unset-forced-down' };
  if (service.state !== 'up') {
    return { kind: 'wait', reason: 'its compute service does not report up yet', until: null };
  }
  if (input.reportAgeSeconds !== null && input.reportAgeSeconds > input.deltaSeconds) {
    return {
      kind: 'wait',
      reason: `its compute service last reported ${Math.round(input.reportAgeSeconds)} s ago (more than DELTA, ${input.deltaSeconds} s): it is not reporting`,
      until: null,
    };
  }
  return { kind: 'enable' };
}

/**
 * The host's open incident when it is not the one a re-enable job was asked for: the host failed
 * again (a new incident opened after the job's was closed), so the job must not act. Null when the
 * job names no incident, or the open one is the job's, or none is open.
 */
export function supersedingIncident(
  jobIncidentId: string | null,
  openIncident: Pick<Incident, 'id'> | null,
): Pick<Incident, 'id'> | null {
  if (jobIncidentId === null || openIncident === null) return null;
  return openIncident.id === jobIncidentId ? null : openIncident;
}
