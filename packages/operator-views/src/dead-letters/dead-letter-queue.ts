import { DEAD_LETTER_QUEUE } from '@lifeguard/contracts';
import type { AmqpClient } from '@lifeguard/runtime';
import type { Channel, GetMessage } from 'amqplib';
import { type DeadLetter, describeDeadLetter } from './dead-letter.ts';

/**
 * The most dead letters one command reads. Reading takes the whole queue (up to this many) and puts
 * it back with one requeue, which keeps the order; the messages past this many are not read, and
 * those read are then put back behind them.
 */
export const DEAD_LETTER_READ_CAP = 10_000;

/** The dead letters one command read: the whole queue, or its first DEAD_LETTER_READ_CAP. */
export interface DeadLetterBatch {
  readonly messages: GetMessage[];
  /** True when the queue held more than DEAD_LETTER_READ_CAP messages (the rest were not read). */
  readonly capped: boolean;
}

/**
 * Takes the whole dead-letter queue (its first DEAD_LETTER_READ_CAP messages) without acknowledging
 * it, runs `work`, and puts back every message `work` did not `acknowledge` with one multiple
 * `basic.nack` (requeue): RabbitMQ returns them in delivery order to an otherwise empty queue, so the
 * order is kept (taking fewer would put those taken behind the rest, and a quorum queue counts each
 * return in `x-delivery-count`). Fetching all first also means a message dead-lettered again while
 * `work` runs is never taken twice in one call. A quorum queue applies a requeue asynchronously, so
 * before returning this waits (two seconds at most) until the messages put back are ready again: a
 * command run right after this one sees them. Reading calls it with a `work` that acknowledges
 * nothing; a replay (@lifeguard/operator-actions) acknowledges each message once its copy is back.
 */
export async function takeDeadLetters<Result>(
  amqp: AmqpClient,
  work: (batch: DeadLetterBatch, acknowledge: (message: GetMessage) => void) => Promise<Result>,
): Promise<Result> {
  let readyBefore = 0;
  let acknowledged = 0;
  const result = await amqp.withChannel(async (channel: Channel) => {
    readyBefore = (await channel.checkQueue(DEAD_LETTER_QUEUE)).messageCount;
    const messages: GetMessage[] = [];
    while (messages.length < DEAD_LETTER_READ_CAP) {
      const message = await channel.get(DEAD_LETTER_QUEUE, { noAck: false });
      if (message === false) break;
      messages.push(message);
    }
    const capped =
      messages.length === DEAD_LETTER_READ_CAP &&
      (await channel.checkQueue(DEAD_LETTER_QUEUE)).messageCount > 0;
    try {
      return await work({ messages, capped }, (message) => {
        channel.ack(message);
        acknowledged++;
      });
    } finally {
      channel.nackAll(true);
    }
  });
  const deadline = Date.now() + 2000;
  while (Date.now() < deadline) {
    const ready = await amqp.withChannel(
      async (channel) => (await channel.checkQueue(DEAD_LETTER_QUEUE)).messageCount,
    );
    if (ready >= readyBefore - acknowledged) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return result;
}

/**
 * Describes the first `limit` dead letters, oldest first, and leaves every message where it was
 * (same order; each one read gets one more `x-delivery-count`).
 */
export function listDeadLetters(amqp: AmqpClient, limit: number): Promise<DeadLetter[]> {
  return takeDeadLetters(amqp, async ({ messages }) => messages.slice(0, limit).map(describeDeadLetter));
}

/** How many messages wait in the dead-letter queue. */
export async function countDeadLetters(amqp: AmqpClient): Promise<number> {
  return amqp.withChannel(async (channel) => (await channel.checkQueue(DEAD_LETTER_QUEUE)).messageCount);
}
