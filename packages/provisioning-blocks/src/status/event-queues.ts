import { EVENTS_EXCHANGE, QUEUES } from '@lifeguard/contracts';
import { declareWorkQueue } from '@lifeguard/runtime';
import type { Channel } from 'amqplib';

/**
 * The queue of `provisioning.complete.port` events read by the port-status subscriber. Declared by
 * the subscriber and by the service that publishes the events, so completions are routable (and kept)
 * even before a subscriber first starts.
 */
export async function declareProvisioningCompleteQueue(channel: Channel): Promise<void> {
  await channel.assertExchange(EVENTS_EXCHANGE, 'topic', { durable: true });
  await declareWorkQueue(channel, QUEUES.provisioningComplete, [
    { exchange: EVENTS_EXCHANGE, routingKey: 'provisioning.complete.port' },
  ]);
}

/**
 * The queue of `port.status.changed` and `port.vif.plugged` events read by the Nova notifier; declared
 * by the notifier and by the publishing service, as above.
 */
export async function declareNovaPortNotificationsQueue(channel: Channel): Promise<void> {
  await channel.assertExchange(EVENTS_EXCHANGE, 'topic', { durable: true });
  await declareWorkQueue(channel, QUEUES.novaPortNotifications, [
    { exchange: EVENTS_EXCHANGE, routingKey: 'port.status.changed' },
    { exchange: EVENTS_EXCHANGE, routingKey: 'port.vif.plugged' },
  ]);
}
