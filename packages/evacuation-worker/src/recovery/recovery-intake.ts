import {
  EVENTS_EXCHANGE,
  JOB_NAMES,
  LifeguardEvent,
  QUEUES,
  ReenableJobData,
  reenableJobId,
} from '@lifeguard/contracts';
import { type IncidentStore, shortHostname } from '@lifeguard/instance-ha';
import {
  type AmqpClient,
  declareWorkQueue,
  type FencingTokenGuard,
  type ManagedConsumer,
  RejectedMessageError,
} from '@lifeguard/runtime';
import type { JobsOptions, Queue } from 'bullmq';
import type { Logger } from 'pino';

/**
 * Options of `reenable` jobs: removed once done (or failed: only invalid data fails them), so the
 * next request for the host starts afresh under the same id.
 */
export const REENABLE_JOB_OPTIONS: JobsOptions = {
  attempts: 1,
  removeOnComplete: true,
  removeOnFail: true,
};

/**
 * Consumes `host.recovery.requested` events from the quorum work queue `QUEUES.hostRecovery` (bound to
 * the events exchange) and turns each into one `reenable` job on the `recovery` queue, de-duplicated
 * per host (BullMQ deduplication id `reenable.<short host>`: requests arriving while a host's job is
 * waiting or running collapse onto it). Events from a stale node-monitor leader (a fencing token older
 * than the newest seen) are dropped; events with a token the leader lease never issued, events whose
 * `incidentId` is not null and names no incident or another host's incident, and any other event type
 * on the queue, are dead-lettered with their reason (and logged at warn). A request with a null
 * `incidentId` (a host with an InstanceHA marker, or one an operator forced down) is taken as it is.
 */
export async function startRecoveryIntake(
  amqp: AmqpClient,
  recoveryQueue: Queue,
  guard: FencingTokenGuard,
  incidents: IncidentStore,
  logger: Logger,
  prefetch = 16,
): Promise<ManagedConsumer<LifeguardEvent>> {
  return amqp.consume<LifeguardEvent>({
    queue: QUEUES.hostRecovery,
    prefetch,
    contract: 'host.recovery.requested event',
    schema: LifeguardEvent,
    declare: (channel) =>
      declareWorkQueue(channel, QUEUES.hostRecovery, [
        { exchange: EVENTS_EXCHANGE, routingKey: 'host.recovery.requested' },
      ]),
    handler: async (event) => {
      if (event.type !== 'host.recovery.requested') {
        throw new RejectedMessageError(`expected a host.recovery.requested event, got ${event.type}`);
      }
      const { data } = event;
      // Checked before the token is recorded: a forged request must not raise the highest token seen.
      await refuseUnknownIncident(incidents, data.host, data.incidentId, logger);
      if (!(await guard.accept(data.fencingToken))) {
        logger.warn(
          { host: data.host, fencingToken: data.fencingToken },
          `Dropping a recovery request for ${data.host} from a stale node-monitor leader`,
        );
        return;
      }
      const job = ReenableJobData.parse({
        host: data.host,
        serviceId: data.serviceId,
        incidentId: data.incidentId,
        disabledReason: data.disabledReason,
        requestedAt: event.occurredAt,
      });
      await recoveryQueue.add(JOB_NAMES.reenable, job, {
        ...REENABLE_JOB_OPTIONS,
        jobId: reenableJobId(data.host, data.incidentId),
        deduplication: { id: `reenable.${shortHostname(data.host).replace(/[^A-Za-z0-9._-]/g, '_')}` },
      });
      logger.debug({ host: data.host, incidentId: data.incidentId }, `Re-enable of ${data.host} requested`);
    },
  });
}

/**
 * Refuses a recovery request whose incident does not exist or belongs to another host; a null
 * `incidentId` passes.
 * @throws RejectedMessageError naming the incident and the host (the request is dead-lettered)
 */
async function refuseUnknownIncident(
  incidents: IncidentStore,
  host: string,
  incidentId: string | null,
  logger: Logger,
): Promise<void> {
  if (incidentId === null) return;
  const incident = await incidents.get(incidentId);
  let reason: string | null = null;
  if (incident === null) reason = `incident ${incidentId} of host ${host} does not exist`;
  else if (incident.host !== host)
    reason = `incident ${incidentId} belongs to host ${incident.host}, not ${host}`;
  if (reason === null) return;
  logger.warn({ host, incidentId }, `Refusing a recovery request: ${reason}`);
  throw new RejectedMessageError(reason);
}
