import type { Logger } from 'pino';
import type { EventSink } from '../event-sink.ts';
import type { IncidentInstance } from './incident-instance.ts';

/**
 * Says that a server was deleted by its owner before or during its evacuation (Nova answered 404):
 * an info log line `Instance <id> (<name>) of <host> was deleted by its owner: not evacuated` and
 * `instance.evacuation.skipped` with reason `deleted`. The host's evacuation goes on without it.
 */
export async function announceDeleted(
  events: EventSink,
  log: Logger,
  instance: IncidentInstance,
  sent: { readonly attempts: number; readonly novaRequestId: string | null },
): Promise<void> {
  log.info(
    { instanceId: instance.instanceId, attempts: sent.attempts, novaRequestId: sent.novaRequestId },
    `Instance ${instance.instanceId} (${instance.instanceName}) of ${instance.host} was deleted by its owner: not evacuated`,
  );
  await events.publish('instance.evacuation.skipped', {
    host: instance.host,
    incidentId: instance.incidentId,
    instanceId: instance.instanceId,
    instanceName: instance.instanceName,
    reason: 'deleted',
    attempts: sent.attempts,
    novaRequestId: sent.novaRequestId,
  });
}
