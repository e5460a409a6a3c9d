import { type DeadLetter, listDeadLetters, type SystemStatus, systemStatus } from '@lifeguard/cli';
import type { ConsoleConnections } from '../connections.ts';
import { type Seen, see } from './seen.ts';

/** How many dead letters the queues page lists (oldest first). */
export const DEAD_LETTERS_SHOWN = 50;

export interface QueuesView {
  /** Workers, worker kinds, leader, BullMQ and RabbitMQ queues, as `lifeguard status` reads them. */
  readonly status: Seen<SystemStatus>;
  /** The dead-letter queue's messages with their reasons, as `lifeguard dlq list` reads them. */
  readonly deadLetters: Seen<DeadLetter[]>;
}

/**
 * Reads what `lifeguard status` and `lifeguard dlq list` read, with the CLI's own functions. Without
 * RabbitMQ the status still shows (its `brokerError` says why the RabbitMQ queues are missing).
 */
export async function readQueues(connections: ConsoleConnections): Promise<QueuesView> {
  const seconds = connections.config.LIFEGUARD_CONSOLE_READ_TIMEOUT_SECONDS;
  const [status, deadLetters] = await Promise.all([
    see('Redis', seconds, async () => {
      const amqp = connections.amqp();
      amqp.catch(() => undefined);
      const incidents = await connections.incidents();
      return systemStatus({
        redis: await connections.redis(),
        amqp,
        keyPrefix: connections.keyPrefix,
        openIncidents: () => incidents.listOpen(),
      });
    }),
    see('RabbitMQ', seconds, async () => listDeadLetters(await connections.amqp(), DEAD_LETTERS_SHOWN)),
  ]);
  return { status, deadLetters };
}
