import { ProvisioningCompleteEvent, QUEUES } from '@lifeguard/contracts';
import type { AmqpClient, ManagedConsumer } from '@lifeguard/runtime';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { ProvisioningMetrics } from '../metrics.ts';
import type { PortStore, ProvisionedOutcome } from '../store/port-store.ts';
import { declareProvisioningCompleteQueue } from './event-queues.ts';

/** ML2's MAX_PROVISIONING_TRIES: how often a compute port seen unbound is looked at again. */
export const MAX_PROVISIONING_TRIES = 10;

export interface PortStatusSubscriberOptions {
  amqp: AmqpClient;
  ports: PortStore;
  logger: Logger;
  metrics?: ProvisioningMetrics | null;
  /** How long a handled event id is remembered, in seconds. */
  handledTtlSeconds: number;
  prefetch: number;
  /** Wait between looks at a compute port seen unbound, in milliseconds (ML2: 500). */
  unboundRetryMilliseconds?: number;
}

type CompleteEvent = z.output<typeof ProvisioningCompleteEvent>;

/**
 * ML2's provisioning_complete subscriber for ports (`_port_provisioned`, docs/neutron-provisioning-rules.md#active-after-provisioning): consumes
 * `provisioning.complete.port` events and sets the port ACTIVE only if it still exists, is bound
 * (`binding:vif_type` neither `unbound` nor `binding_failed`; a compute port seen unbound is looked at
 * again up to 10 times, 0.5 s apart), has no block left and is administratively up. Each event id is
 * handled once (de-duplicated in the same Lua script as the status write); an ACTIVE port is left
 * alone, so repeated completions are harmless. A status change appends `port.status.changed` to the
 * outbox, from which the Nova notifier works.
 */
export class PortStatusSubscriber {
  private consumer: ManagedConsumer<CompleteEvent> | null = null;

  constructor(private readonly options: PortStatusSubscriberOptions) {}

  async start(): Promise<void> {
    this.consumer = await this.options.amqp.consume({
      queue: QUEUES.provisioningComplete,
      prefetch: this.options.prefetch,
      contract: 'provisioning.complete event',
      schema: ProvisioningCompleteEvent,
      declare: declareProvisioningCompleteQueue,
      handler: (event) => this.handle(event).then(() => undefined),
    });
  }

  /** Stops consuming and waits for the events in flight. */
  async stop(timeoutMilliseconds = 10_000): Promise<void> {
    await this.consumer?.stop(timeoutMilliseconds);
  }

  get isConsuming(): boolean {
    return this.consumer?.isConsuming ?? false;
  }

  /** Handles one event (exported for direct use); returns what happened to the port. */
  async handle(event: CompleteEvent): Promise<ProvisionedOutcome> {
    const { ports, metrics, logger, handledTtlSeconds } = this.options;
    const portId = event.data.objectId;
    const retry = this.options.unboundRetryMilliseconds ?? 500;
    for (let attempt = 1; ; attempt++) {
      const { outcome, previousStatus } = await ports.markProvisioned(
        portId,
        event.id,
        event.data.entity,
        handledTtlSeconds,
        attempt >= MAX_PROVISIONING_TRIES,
      );
      if (outcome === 'unbound_retry') {
        await new Promise((resolve) => setTimeout(resolve, retry));
        continue;
      }
      if (outcome === 'duplicate') metrics?.duplicatesSuppressed.inc({ source: 'event' });
      if (outcome === 'activated') {
        metrics?.statusTransitions.inc({ from: previousStatus ?? '', to: 'ACTIVE' });
        logger.debug({ portId, previousStatus, entity: event.data.entity }, 'port ACTIVE');
      } else {
        logger.debug({ portId, outcome, entity: event.data.entity }, 'port not set ACTIVE');
      }
      return outcome;
    }
  }
}
