import { readSystemStatus, type SystemStatus } from '@lifeguard/operator-views';
import type { ConsoleConnections } from '../connections.ts';
import type { DeadLetterCache, DeadLetterListing } from './dead-letter-cache.ts';
import { type Seen, see } from './seen.ts';

export interface QueuesView {
  /** Workers, worker kinds, leader, BullMQ and RabbitMQ queues, as `lifeguard status` reads them. */
  readonly status: Seen<SystemStatus>;
  /** The dead-letter queue's messages with their reasons, as `lifeguard dlq list` reads them. */
  readonly deadLetters: Seen<DeadLetterListing>;
}

/**
 * Reads what `lifeguard status` and `lifeguard dlq list` read, with the same queries
 * (@lifeguard/operator-views; the dead letters through DeadLetterCache: read only on a page load,
 * `pageLoad`, and only when changed). Without RabbitMQ the status still shows (its `brokerError` says
 * why the RabbitMQ queues are missing).
 */
export async function readQueues(
  connections: ConsoleConnections,
  deadLetters: DeadLetterCache,
  pageLoad: boolean,
): Promise<QueuesView> {
  const seconds = connections.config.LIFEGUARD_CONSOLE_READ_TIMEOUT_SECONDS;
  const [status, listing] = await Promise.all([
    see('Redis', seconds, () => readSystemStatus(connections)),
    see('RabbitMQ', seconds, async () => deadLetters.listing(await connections.amqp(), pageLoad)),
  ]);
  return { status, deadLetters: listing };
}
