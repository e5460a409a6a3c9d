import { type EventData, transitionEventId } from '@lifeguard/contracts';
import { EVACUABLE_STATUSES, type InstanceSelection } from '@lifeguard/instance-ha';
import type { Logger } from 'pino';
import type { EventSink } from '../event-sink.ts';

/** One server of a failed host that is not evacuated, with the reason the event gives. */
interface Skipped {
  readonly id: string;
  readonly name: string;
  readonly reason: Exclude<EventData<'instance.evacuation.skipped'>['reason'], 'deleted'>;
  readonly detail: string;
}

/** Every server the selection leaves on the host, with its reason, in the listing's groups' order. */
export function skippedServers(selection: InstanceSelection): Skipped[] {
  return [
    ...selection.wrongStatus.map((server) => ({
      id: server.id,
      name: server.name,
      reason: 'status' as const,
      detail: `status ${server.status} is not evacuated (only ${EVACUABLE_STATUSES.join(', ')})`,
    })),
    ...selection.excluded.map(({ server, exclusion }) => ({
      id: server.id,
      name: server.name,
      reason: exclusion.reason,
      detail: exclusion.detail,
    })),
    ...selection.notEvacuable.map((server) => ({
      id: server.id,
      name: server.name,
      reason: 'not-evacuable' as const,
      detail: 'neither its image nor its flavor is tagged evacuable (TAGGED_IMAGES, TAGGED_FLAVORS)',
    })),
  ];
}

/**
 * Says, for each server of a failed host that its plan leaves where it is, why: one info log line and
 * `instance.evacuation.skipped` with `reason` and `detail`. The event id is the transition's
 * (incident, instance), so a plan made again after a crash repeats the same events.
 */
export async function announceSkipped(
  events: EventSink,
  log: Logger,
  incident: { readonly host: string; readonly incidentId: string },
  selection: InstanceSelection,
): Promise<void> {
  const skipped = skippedServers(selection);
  if (skipped.length === 0) return;
  log.info(
    { skipped: skipped.map(({ id, reason }) => ({ id, reason })) },
    `${skipped.length} server(s) of ${incident.host} are not evacuated: ${skipped.map((each) => `${each.name || each.id} (${each.reason})`).join(', ')}`,
  );
  for (const each of skipped) {
    await events.publish(
      'instance.evacuation.skipped',
      {
        host: incident.host,
        incidentId: incident.incidentId,
        instanceId: each.id,
        instanceName: each.name,
        reason: each.reason,
        detail: each.detail,
        attempts: 0,
        novaRequestId: null,
      },
      { id: transitionEventId('instance.evacuation.skipped', incident.incidentId, each.id) },
    );
  }
}
