import {
  EVENTS_EXCHANGE,
  type EventOf,
  type FencingJobData,
  fencingJobId,
  HostDownEvent,
  JOB_NAMES,
  QUEUES,
} from '@lifeguard/contracts';
import type { IncidentStore } from '@lifeguard/instance-ha';
import {
  type AmqpClient,
  declareWorkQueue,
  type FencingTokenGuard,
  type Logger,
  type ManagedConsumer,
  RejectedMessageError,
} from '@lifeguard/runtime';
import type { Queue } from 'bullmq';
import type { FencingMetrics } from './fencing-metrics.ts';
import { BACKOFF_BY_ERROR_KIND } from './job-errors.ts';

/** Completed and failed fence jobs are kept this long, in seconds, so late duplicates still collapse. */
export const FENCE_JOB_RETENTION_SECONDS = 30 * 24 * 3600;

export interface HostDownIntakeDependencies {
  amqp: AmqpClient;
  /** The `fencing` BullMQ queue. */
  queue: Queue;
  guard: FencingTokenGuard;
  incidents: IncidentStore;
  logger: Logger;
  metrics: FencingMetrics;
  /** BullMQ `attempts` of a fence job. */
  attempts: number;
  /** Unacknowledged events at once (default 16). */
  prefetch?: number;
}

/** The work queue the intake reads: `lifeguard.fencing-worker.host-down`, bound to `host.down` events. */
export async function declareHostDownQueue(channel: Parameters<typeof declareWorkQueue>[0]): Promise<void> {
  await declareWorkQueue(channel, QUEUES.hostDown, [{ exchange: EVENTS_EXCHANGE, routingKey: 'host.down' }]);
}

/**
 * Turns `host.down` events into fence jobs: one BullMQ job per incident in the `fencing` queue, with
 * the deterministic id `fencingJobId(host, incident)`, so redelivered and duplicated events collapse.
 * The event is acknowledged only once the job is stored in Redis. Events from a stale node monitor (a
 * fencing token older than the newest one seen, FencingTokenGuard) and events of closed incidents are
 * dropped with a log line; an event naming an incident that does not exist is dead-lettered.
 * A duplicate of a job that failed is retried when a retry can help: the failure was recoverable
 * (the node monitor re-announcing the host means "try again", as InstanceHA retries every cycle), or
 * the incident meanwhile has a fence record (an operator confirmed the host off).
 */
export class HostDownIntake {
  private consumer: ManagedConsumer<EventOf<'host.down'>> | null = null;

  constructor(private readonly deps: HostDownIntakeDependencies) {}

  async start(): Promise<void> {
    this.consumer = await this.deps.amqp.consume({
      queue: QUEUES.hostDown,
      prefetch: this.deps.prefetch ?? 16,
      contract: 'host.down event',
      schema: HostDownEvent,
      declare: declareHostDownQueue,
      handler: (event) => this.handle(event),
    });
  }

  async stop(): Promise<void> {
    await this.consumer?.stop();
  }

  /**
   * Handles one event; resolves once the job is stored (or the event is dropped).
   * @throws RejectedMessageError for an event whose incident does not exist or is another host's, or
   *   whose fencing token the node monitors' lease never issued (dead-lettered, nothing recorded)
   */
  async handle(event: EventOf<'host.down'>): Promise<void> {
    const { host, incidentId, fencingToken } = event.data;
    const logger = this.deps.logger.child({ host, incidentId, eventId: event.id, fencingToken });
    // The message is checked whole before its token is recorded: an event naming no incident, or
    // another host's, must not raise the highest token seen.
    const incident = await this.deps.incidents.get(incidentId);
    if (incident === null)
      throw new RejectedMessageError(`incident ${incidentId} of host ${host} does not exist`);
    if (incident.host !== host)
      throw new RejectedMessageError(`incident ${incidentId} belongs to host ${incident.host}, not ${host}`);
    if (!(await this.deps.guard.accept(fencingToken))) {
      const highest = await this.deps.guard.highest();
      logger.warn(
        { highestFencingToken: highest },
        'host.down from a stale node monitor dropped (older fencing token)',
      );
      this.deps.metrics.intake.inc({ outcome: 'stale' });
      return;
    }
    if (incident.state === 'closed') {
      logger.info({ outcome: incident.outcome }, 'host.down of a closed incident dropped');
      this.deps.metrics.intake.inc({ outcome: 'closed' });
      return;
    }
    const jobId = fencingJobId(host, incidentId);
    const existing = await this.deps.queue.getJob(jobId);
    if (existing) {
      const state = await existing.getState();
      const unrecoverable = (existing.failedReason ?? '').startsWith('not recoverable');
      if (state === 'failed' && (!unrecoverable || incident.fence !== null)) {
        await existing.retry('failed');
        logger.info(
          { jobId, fence: incident.fence?.proof ?? null },
          'failed fence job retried on a new host.down',
        );
        this.deps.metrics.intake.inc({ outcome: 'retried' });
        return;
      }
      logger.info({ jobId, state }, 'duplicate host.down: the fence job already exists');
      this.deps.metrics.intake.inc({ outcome: 'duplicate' });
      return;
    }
    const data: FencingJobData = {
      host,
      serviceId: event.data.evidence.serviceId,
      incidentId,
      fencingToken,
      kdumpFenced: event.data.kdumpFenced,
      resume: event.data.resume,
      detectedAt: event.occurredAt,
    };
    await this.deps.queue.add(JOB_NAMES.fence, data, {
      jobId,
      attempts: this.deps.attempts,
      backoff: { type: BACKOFF_BY_ERROR_KIND },
      removeOnComplete: { age: FENCE_JOB_RETENTION_SECONDS },
      removeOnFail: { age: FENCE_JOB_RETENTION_SECONDS },
    });
    logger.info({ jobId }, 'fence job stored');
    this.deps.metrics.intake.inc({ outcome: 'stored' });
  }
}
