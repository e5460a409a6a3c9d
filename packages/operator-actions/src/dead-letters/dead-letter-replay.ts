import { DEAD_LETTER_HEADERS, DEAD_LETTER_QUEUE, REPLAY_HEADERS } from '@lifeguard/contracts';
import {
  DEAD_LETTER_READ_CAP,
  describeDeadLetter,
  type MessageHeaders,
  takeDeadLetters,
} from '@lifeguard/operator-views';
import type { AmqpClient, PublishOptions } from '@lifeguard/runtime';

/** What happened to one message of `replay`. */
export interface ReplayResult {
  readonly id: string;
  /** `skipped`: not sent (a dry run, or its origin is not recorded); `not-found`: an id asked for is not queued. */
  readonly outcome: 'replayed' | 'failed' | 'skipped' | 'not-found';
  /** Where it was sent (`queue <name>` or `exchange <name> key <key>`), or why not. */
  readonly detail: string;
}

/** Headers of the replayed copy: the dead-lettering records removed, the replay recorded. */
export function replayHeaders(
  headers: MessageHeaders,
  replayedBy: string,
  at: Date = new Date(),
): MessageHeaders {
  const removed = new Set<string>([
    ...Object.values(DEAD_LETTER_HEADERS),
    'x-death',
    'x-first-death-queue',
    'x-first-death-reason',
    'x-first-death-exchange',
    'x-last-death-queue',
    'x-last-death-reason',
    'x-last-death-exchange',
    'x-delivery-count',
  ]);
  const kept = Object.fromEntries(Object.entries(headers).filter(([key]) => !removed.has(key)));
  return {
    ...kept,
    [REPLAY_HEADERS.at]: at.toISOString(),
    [REPLAY_HEADERS.by]: replayedBy,
    [REPLAY_HEADERS.count]: (Number(headers[REPLAY_HEADERS.count] ?? 0) || 0) + 1,
  };
}

/**
 * Sends dead letters back where they failed: to their original queue (through the default exchange,
 * so no other queue bound to the original exchange gets a second copy) when it is known, else to the
 * original exchange and routing key. Each is published with confirms (mandatory: a queue that no
 * longer exists fails the replay) and only then acknowledged, so it leaves the dead-letter queue
 * exactly when its copy is safely back. Properties (message id, type, content type, timestamp, ...)
 * are kept; headers get REPLAY_HEADERS. Without `ids`, the first `limit` messages are replayed; with
 * `ids`, those messages wherever they are in the queue (its first DEAD_LETTER_READ_CAP), and an id
 * that is not there gets outcome `not-found`. Every other message stays, in its order.
 */
export function replayDeadLetters(
  amqp: AmqpClient,
  options: { limit: number; ids?: ReadonlyArray<string>; replayedBy: string; dryRun?: boolean },
): Promise<ReplayResult[]> {
  const wanted = options.ids && options.ids.length > 0 ? new Set(options.ids) : null;
  return takeDeadLetters(amqp, async ({ messages: all, capped }, acknowledge) => {
    const messages = wanted ? all : all.slice(0, options.limit);
    const results: ReplayResult[] = [];
    for (const message of messages) {
      const letter = describeDeadLetter(message);
      if (wanted && !wanted.has(letter.id)) continue;
      const target =
        letter.queue !== null
          ? { exchange: '', routingKey: letter.queue, detail: `queue ${letter.queue}` }
          : letter.exchange !== null && letter.routingKey !== null
            ? {
                exchange: letter.exchange,
                routingKey: letter.routingKey,
                detail: `exchange ${letter.exchange || '(default)'} key ${letter.routingKey}`,
              }
            : null;
      if (target === null) {
        results.push({ id: letter.id, outcome: 'skipped', detail: 'its original queue is not recorded' });
        continue;
      }
      if (options.dryRun) {
        results.push({ id: letter.id, outcome: 'skipped', detail: `dry run: would go to ${target.detail}` });
        continue;
      }
      const { properties } = message;
      const publishOptions: PublishOptions = {
        persistent: true,
        headers: replayHeaders((properties.headers ?? {}) as MessageHeaders, options.replayedBy),
        ...(properties.messageId ? { messageId: String(properties.messageId) } : {}),
        ...(properties.type ? { type: String(properties.type) } : {}),
        ...(properties.contentType ? { contentType: String(properties.contentType) } : {}),
        ...(properties.contentEncoding ? { contentEncoding: String(properties.contentEncoding) } : {}),
        ...(properties.correlationId ? { correlationId: String(properties.correlationId) } : {}),
        ...(properties.timestamp ? { timestamp: Number(properties.timestamp) } : {}),
      };
      try {
        await amqp.publish(target.exchange, target.routingKey, message.content, publishOptions);
      } catch (error) {
        results.push({ id: letter.id, outcome: 'failed', detail: (error as Error).message });
        continue;
      }
      acknowledge(message);
      results.push({ id: letter.id, outcome: 'replayed', detail: target.detail });
    }
    if (wanted) {
      const seen = new Set(results.map((result) => result.id));
      for (const id of wanted) {
        if (!seen.has(id)) {
          results.push({
            id,
            outcome: 'not-found',
            detail: capped
              ? `not among the first ${DEAD_LETTER_READ_CAP} messages of ${DEAD_LETTER_QUEUE}`
              : `not in ${DEAD_LETTER_QUEUE}`,
          });
        }
      }
    }
    return results;
  });
}

/** Deletes every ready message of the dead-letter queue. @returns how many were deleted */
export async function purgeDeadLetters(amqp: AmqpClient): Promise<number> {
  return amqp.withChannel(async (channel) => (await channel.purgeQueue(DEAD_LETTER_QUEUE)).messageCount);
}
