import { transitionEventId } from '@lifeguard/contracts';
import type { EventSink } from '../event-sink.ts';
import type { IncidentInstance } from './incident-instance.ts';

/** Where an instance's evacuation ended and what it took. */
export interface EvacuationRecord {
  /** The host the instance runs on now, when known. */
  readonly targetHost: string | null;
  readonly migrationStatus: string | null;
  readonly attempts: number;
  readonly novaRequestId: string | null;
}

/**
 * Says that an instance of a fenced host is settled on another host: `instance.evacuated`, with the
 * seconds since its evacuation started. One id per instance and incident (transitionEventId): a job
 * retried after its worker died past this point finds the instance already evacuated and announces
 * it again as the same event. The instance job announces it in smart and orchestrated modes, the host
 * job's verification in traditional mode (EvacuationPolicy.instanceEvacuatedAnnouncedBy).
 */
export async function announceEvacuated(
  events: EventSink,
  instance: IncidentInstance,
  evacuation: EvacuationRecord,
  durationSeconds: number,
): Promise<void> {
  await events.publish(
    'instance.evacuated',
    {
      host: instance.host,
      incidentId: instance.incidentId,
      instanceId: instance.instanceId,
      instanceName: instance.instanceName,
      targetHost: evacuation.targetHost,
      migrationStatus: evacuation.migrationStatus,
      attempts: evacuation.attempts,
      novaRequestId: evacuation.novaRequestId,
      durationSeconds,
    },
    { id: transitionEventId('instance.evacuated', instance.incidentId, instance.instanceId) },
  );
}
