import { PortStatusChangedEvent, PortVifPluggedEvent, QUEUES } from '@lifeguard/contracts';
import type { ComputeApi, ServerExternalEvent } from '@lifeguard/openstack';
import { type AmqpClient, type ManagedConsumer, RejectedMessageError } from '@lifeguard/runtime';
import type { Logger } from 'pino';
import { z } from 'zod';
import { NovaNotificationError } from '../errors.ts';
import type { ProvisioningMetrics } from '../metrics.ts';
import { declareNovaPortNotificationsQueue } from './event-queues.ts';
import { novaEventFor } from './nova-events.ts';
import type { NovaTold } from './nova-told.ts';

/** The one Compute API call the notifier makes. */
export type ExternalEventsApi = Pick<ComputeApi, 'createServerExternalEvents'>;

export interface NovaNotifierOptions {
  amqp: AmqpClient;
  compute: ExternalEventsApi;
  logger: Logger;
  metrics?: ProvisioningMetrics | null;
  prefetch: number;
  /** Neutron's send_events_interval in seconds (default 2): events queued meanwhile go in one request. */
  sendEventsIntervalSeconds: number;
  /** At most this many events per request (default 500). */
  maxEventsPerRequest?: number;
  /** Attempts per request on connection failures, timeouts, 408, 429 and 5xx (default 8). */
  maxAttempts: number;
  /** First wait between attempts, doubled each time, in milliseconds (default 1000). */
  initialBackoffMilliseconds?: number;
  /** Longest wait between attempts, in milliseconds (default 30000). */
  maxBackoffMilliseconds?: number;
  /** The events Nova was told of: one redelivered after Nova answered is acknowledged without a second call. */
  told?: NovaTold;
}

const PortEvent = z.discriminatedUnion('type', [PortStatusChangedEvent, PortVifPluggedEvent]);
type PortEvent = z.output<typeof PortEvent>;

/** What Nova did with one event: took it (code 200) or refused it (its own code: 404, 422, 400). */
export interface NovaEventOutcome {
  readonly code: number;
}

interface Pending {
  readonly event: ServerExternalEvent;
  readonly resolve: (outcome: NovaEventOutcome) => void;
  readonly reject: (error: Error) => void;
}

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

function httpStatus(error: unknown): number | null {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status > 0 ? status : null;
}

/**
 * Tells Nova about port status changes, as Neutron's Nova notifier (docs/neutron-provisioning-rules.md#nova-notification): consumes
 * `port.status.changed` and `port.vif.plugged`, turns them into `network-vif-plugged` /
 * `network-vif-unplugged` by the transition rules, and sends them batched (the first at once, the
 * rest gathered while waiting `send_events_interval`) in one `POST /os-server-external-events`.
 * Each event's own code in a 207 answer is handled on its own: accepted events are done, refused
 * ones (404 unknown instance, 422 no host, 400) are logged and not retried (Nova bug 1333654).
 * Connection failures, timeouts and 5xx answers are retried with doubling back-off; after the last
 * attempt the messages are dead-lettered with the reason. A message is acknowledged only when its
 * event was answered, and the event is then marked told (NovaTold): a redelivery of it (a crash
 * between Nova's answer and the ack) is acknowledged without telling Nova twice.
 */
export class NovaNotifier {
  private consumer: ManagedConsumer<PortEvent> | null = null;
  private readonly queue: Pending[] = [];
  private sending = false;
  private stopping = false;

  constructor(private readonly options: NovaNotifierOptions) {}

  async start(): Promise<void> {
    this.consumer = await this.options.amqp.consume({
      queue: QUEUES.novaPortNotifications,
      prefetch: this.options.prefetch,
      contract: 'port event for Nova',
      schema: PortEvent,
      declare: declareNovaPortNotificationsQueue,
      handler: async (event) => {
        const { told, logger } = this.options;
        if (await told?.wasTold(event.id)) {
          logger.info(
            { eventId: event.id, portId: event.data.portId },
            'Nova was already told of this port event (a redelivery): not told again',
          );
          return;
        }
        if ((await this.notify(event)) !== null) await told?.recordTold(event.id);
      },
    });
  }

  /** Stops consuming; queued events are sent at once instead of after the interval. */
  async stop(timeoutMilliseconds = 10_000): Promise<void> {
    this.stopping = true;
    await this.consumer?.stop(timeoutMilliseconds);
  }

  get isConsuming(): boolean {
    return this.consumer?.isConsuming ?? false;
  }

  /**
   * Sends the Nova event of one port event, if any, and resolves when Nova answered for it.
   * @throws RejectedMessageError when Nova could not be told (after every retry, or a request Nova
   *   refuses as a whole)
   */
  async notify(event: PortEvent): Promise<NovaEventOutcome | null> {
    const novaEvent = novaEventFor(event);
    if (!novaEvent) return null;
    try {
      return await this.submit(novaEvent);
    } catch (error) {
      throw new RejectedMessageError(`Nova was not notified: ${(error as Error).message}`, { cause: error });
    }
  }

  private submit(event: ServerExternalEvent): Promise<NovaEventOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ event, resolve, reject });
      if (!this.sending) void this.run();
    });
  }

  private async run(): Promise<void> {
    this.sending = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.options.maxEventsPerRequest ?? 500);
        await this.deliver(batch);
        if (!this.stopping) await sleep(this.options.sendEventsIntervalSeconds * 1000);
      }
    } finally {
      this.sending = false;
    }
  }

  private async deliver(batch: Pending[]): Promise<void> {
    const { compute, logger, metrics, maxAttempts } = this.options;
    const events = batch.map((each) => each.event);
    let backoff = this.options.initialBackoffMilliseconds ?? 1000;
    for (let attempt = 1; ; attempt++) {
      try {
        const answer = await compute.createServerExternalEvents(events);
        metrics?.novaRequests.inc({ outcome: answer.status === 200 ? 'accepted' : 'partial' });
        batch.forEach((pending, index) => {
          const echoed =
            answer.events[index] ??
            answer.events.find((each) => each.tag === pending.event.tag && each.name === pending.event.name);
          const code = echoed?.code ?? 200;
          metrics?.novaEvents.inc({ name: pending.event.name, code: String(code) });
          if (code !== 200) {
            logger.warn(
              { event: pending.event, code, status: echoed?.status },
              'Nova refused one external event; the others were taken',
            );
          }
          pending.resolve({ code });
        });
        return;
      } catch (error) {
        const status = httpStatus(error);
        if (status === 404) {
          // Nova accepted none of the events (e.g. every instance is gone): as Neutron, nothing to retry.
          metrics?.novaRequests.inc({ outcome: 'rejected' });
          logger.debug({ events }, 'Nova returned 404 for every event');
          for (const pending of batch) {
            metrics?.novaEvents.inc({ name: pending.event.name, code: '404' });
            pending.resolve({ code: 404 });
          }
          return;
        }
        const retryable = status === null || status === 408 || status === 429 || status >= 500;
        if (!retryable || attempt >= maxAttempts) {
          metrics?.novaRequests.inc({ outcome: 'failed' });
          const failure = new NovaNotificationError(
            `POST /os-server-external-events failed after ${attempt} attempt(s): ${(error as Error).message}`,
            { cause: error },
          );
          logger.error({ err: error, events, attempts: attempt }, 'Nova could not be notified');
          for (const pending of batch) pending.reject(failure);
          return;
        }
        metrics?.novaRequests.inc({ outcome: 'retried' });
        logger.warn({ err: error, attempt, waitMilliseconds: backoff }, 'Nova notification failed; retrying');
        await sleep(backoff);
        backoff = Math.min(backoff * 2, this.options.maxBackoffMilliseconds ?? 30_000);
      }
    }
  }
}
