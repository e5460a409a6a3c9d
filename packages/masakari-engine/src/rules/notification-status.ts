import type { InstanceRestartOutcome } from '@lifeguard/contracts';
import type { Incident, MonitorReportVerdict, PlacementOutcome } from '@lifeguard/instance-ha';
import type { NotificationStatus } from '@lifeguard/masakari-api';

/** A status with the reason recorded beside it. */
export interface StatusVerdict<Status extends NotificationStatus = NotificationStatus> {
  readonly status: Status;
  readonly reason: string;
}

/**
 * The status of a COMPUTE_HOST STOPPED notification from what lifeguard made of it
 * (docs/migrating-from-masakari.md#compute_host):
 * - no verdict yet: `running` (the node monitor has not judged the report);
 * - refused by the report rule or a gate: `ignored` (nothing fenced, nothing evacuated), except a
 *   host with no servers (G5 `not-evacuable`, `no-servers`): `finished`, as Masakari finishes a host
 *   failure with no instances;
 * - admitted: follows the incident: `running` while it is open, fencing or evacuating; `finished` once
 *   evacuated (or closed after its fence: re-enabled, or closed by an operator); `error` when it
 *   failed (a person must act, as Masakari's `error` after a failed evacuation); `ignored` when it
 *   closed without a fence (the host came back before the power-off: the action gates refused it).
 * An incident that failed because its segment's recovery_method allowed no evacuation without a
 * reserved host and none was usable (`placement.refused`) says so, in Masakari's words.
 * A pure function.
 */
export function hostFailureStatus(
  verdict: MonitorReportVerdict | null,
  incident: Pick<Incident, 'id' | 'state' | 'fence' | 'outcome'> | null,
  placement: Pick<PlacementOutcome, 'refused' | 'reason'> | null = null,
): StatusVerdict<'running' | 'finished' | 'error' | 'ignored'> {
  if (verdict === null)
    return { status: 'running', reason: 'waiting for the node monitor to judge the report' };
  if (verdict.verdict === 'refused' && verdict.gate === 'not-evacuable' && /no-servers/.test(verdict.reason))
    return { status: 'finished', reason: 'the host has no servers: nothing to evacuate, nothing fenced' };
  if (verdict.verdict === 'refused')
    return {
      status: 'ignored',
      reason: `not acted on (${verdict.gate ?? 'monitor report rule'}): ${verdict.reason}`,
    };
  if (incident === null)
    return { status: 'running', reason: `incident ${verdict.incidentId} not readable yet` };
  switch (incident.state) {
    case 'evacuated':
      return { status: 'finished', reason: `incident ${incident.id}: host fenced and evacuated` };
    case 'failed':
      if (placement?.refused)
        return {
          status: 'error',
          reason: `incident ${incident.id}: No reserved_hosts available for evacuation: ${placement.reason}`,
        };
      return {
        status: 'error',
        reason: `incident ${incident.id} failed: ${incident.outcome ?? 'an operator must act'}`,
      };
    case 'closed':
      return incident.fence === null
        ? {
            status: 'ignored',
            reason: `incident ${incident.id} closed before any fence (${incident.outcome ?? 'no outcome'})`,
          }
        : {
            status: 'finished',
            reason: `incident ${incident.id} closed (${incident.outcome ?? 'no outcome'})`,
          };
    default:
      return { status: 'running', reason: `incident ${incident.id} is ${incident.state}` };
  }
}

/**
 * The status of a VM notification from its `instance-restart` job's outcome: `restarted` finishes,
 * `ignored` is ignored, `failed` is an `error` (retried once, as Masakari retries its errors), and
 * `given-up` (the restarts allowed per hour are spent) is `failed` at once: a retry would give up too.
 * A pure function.
 */
export function instanceRestartStatus(outcome: InstanceRestartOutcome): StatusVerdict {
  // The restart worker knows Masakari's status for its outcome (an instance without HA_Enabled is
  // `finished` in Masakari, not `ignored`); the table is for outcomes that do not say.
  const status =
    outcome.notificationStatus ??
    ({ restarted: 'finished', ignored: 'ignored', failed: 'error', 'given-up': 'failed' } as const)[
      outcome.outcome
    ];
  return { status, reason: `instance restart ${outcome.outcome}: ${outcome.reason}` };
}

/**
 * The status written after one attempt (Masakari's periodic retry of `error` rows, once): an `error`
 * on the notification's first attempt stays `error` and the notification is tried again; on the retry
 * it becomes `failed`. Any other status is written as it is. A pure function.
 */
export function statusAfterAttempt(status: NotificationStatus, retry: boolean): NotificationStatus {
  return status === 'error' && retry ? 'failed' : status;
}
