import type { LifeguardEvent } from '@lifeguard/contracts';
import { masakariTimestamp, type VmoveFacts } from '@lifeguard/masakari-api';
import { type InstanceOutcomeEvent, vmoveVerdict } from './vmove-status.ts';

const OUTCOME_TYPES: ReadonlySet<string> = new Set([
  'instance.evacuated',
  'instance.evacuation.failed',
  'instance.evacuation.skipped',
]);

const isOutcome = (event: LifeguardEvent): event is InstanceOutcomeEvent => OUTCOME_TYPES.has(event.type);

const at = (iso: string): string => masakariTimestamp(new Date(iso));

/** When the instance's move began: its evacuation's own duration, else the host's evacuation start. */
function startTime(event: InstanceOutcomeEvent, hostStartedAt: string | null): string | null {
  if (event.type === 'instance.evacuated')
    return at(new Date(Date.parse(event.occurredAt) - event.data.durationSeconds * 1000).toISOString());
  return event.data.attempts > 0 && hostStartedAt !== null ? at(hostStartedAt) : null;
}

/**
 * The vmoves of a COMPUTE_HOST notification from its incident's events (the incident's timeline, as
 * `lifeguard incident <id>` shows it): one per instance whose evacuation ended, from its latest
 * outcome (vmoveVerdict); type `evacuation`, moved from the failed host to the host it runs on now.
 * `start_time` is when its evacuation began (for a failed or deleted instance, when the host's
 * evacuation began); `end_time` when its outcome was announced. Instances whose evacuation has not
 * ended yet have no vmove: no event names them before. In the order of their outcomes. A pure function.
 */
export function incidentVmoves(incidentId: string, events: ReadonlyArray<LifeguardEvent>): VmoveFacts[] {
  const sorted = [...events]
    .filter((event) => 'incidentId' in event.data && event.data.incidentId === incidentId)
    .sort((a, b) => a.occurredAt.localeCompare(b.occurredAt));
  const latest = new Map<string, { event: InstanceOutcomeEvent; hostStartedAt: string | null }>();
  let hostStartedAt: string | null = null;
  for (const event of sorted) {
    if (event.type === 'host.evacuation.started') hostStartedAt = event.occurredAt;
    if (!isOutcome(event)) continue;
    latest.delete(event.data.instanceId);
    latest.set(event.data.instanceId, { event, hostStartedAt });
  }
  const moves: VmoveFacts[] = [];
  for (const { event, hostStartedAt: started } of latest.values()) {
    const verdict = vmoveVerdict(event);
    if (verdict === null) continue;
    moves.push({
      instanceUuid: event.data.instanceId,
      instanceName: event.data.instanceName,
      sourceHost: event.data.host,
      destHost: event.type === 'instance.evacuated' ? event.data.targetHost : null,
      startTime: startTime(event, started),
      endTime: at(event.occurredAt),
      type: 'evacuation',
      status: verdict.status,
      message: verdict.message,
    });
  }
  return moves;
}
