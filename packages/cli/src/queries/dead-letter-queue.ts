import { createHash } from 'node:crypto';
import { DEAD_LETTER_HEADERS, DEAD_LETTER_QUEUE, REPLAY_HEADERS } from '@lifeguard/contracts';
import type { AmqpClient, PublishOptions } from '@lifeguard/runtime';
import type { Channel, GetMessage } from 'amqplib';

/**
 * A message in lifeguard's dead-letter queue, described from its headers: lifeguard's own
 * (DEAD_LETTER_HEADERS, written when a consumer rejects a message) or RabbitMQ's `x-death`
 * (written when a quorum queue's delivery limit dead-letters it).
 */
export interface DeadLetter {
  /** Stable short id of this dead-lettered copy (for `dlq replay --id`). */
  readonly id: string;
  /** Why it was dead-lettered (the consumer's reason, or RabbitMQ's `delivery_limit`, `rejected`, ...). */
  readonly reason: string | null;
  /** The queue that gave up on it. */
  readonly queue: string | null;
  readonly exchange: string | null;
  readonly routingKey: string | null;
  /** ISO 8601 time it was dead-lettered. */
  readonly deadLetteredAt: string | null;
  /** The service that dead-lettered it (`rabbitmq` for the broker's own dead-lettering). */
  readonly deadLetteredBy: string | null;
  readonly messageId: string | null;
  readonly type: string | null;
  readonly contentType: string | null;
  readonly sizeBytes: number;
  /** How many times it was already replayed from this queue. */
  readonly replayCount: number;
  /** The first characters of the body (UTF-8, control characters shown as `.`). */
  readonly bodyPreview: string;
}

/** What happened to one message of `replay`. */
export interface ReplayResult {
  readonly id: string;
  /** `skipped`: not sent (a dry run, or its origin is not recorded); `not-found`: an id asked for is not queued. */
  readonly outcome: 'replayed' | 'failed' | 'skipped' | 'not-found';
  /** Where it was sent (`queue <name>` or `exchange <name> key <key>`), or why not. */
  readonly detail: string;
}

const PREVIEW_CHARACTERS = 160;

type Headers = Record<string, unknown>;

function text(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return String(value);
}

function isoTime(value: unknown): string | null {
  if (value instanceof Date) return value.toISOString();
  // amqplib decodes an AMQP timestamp in a header table as {'!': 'timestamp', value: <seconds>}.
  if (value !== null && typeof value === 'object' && (value as { '!'?: unknown })['!'] === 'timestamp') {
    return new Date(Number((value as { value: unknown }).value) * 1000).toISOString();
  }
  if (typeof value === 'number') return new Date(value * 1000).toISOString();
  const string = text(value);
  if (string === null) return null;
  const parsed = Date.parse(string);
  return Number.isNaN(parsed) ? string : new Date(parsed).toISOString();
}

/** The first `x-death` entry (RabbitMQ's record of the most recent dead-lettering). */
function firstDeath(headers: Headers): Headers | null {
  const deaths = headers['x-death'];
  return Array.isArray(deaths) && deaths.length > 0 ? (deaths[0] as Headers) : null;
}

/** Describes a message fetched from the dead-letter queue. */
export function describeDeadLetter(message: Pick<GetMessage, 'content' | 'properties'>): DeadLetter {
  const headers = (message.properties.headers ?? {}) as Headers;
  const death = firstDeath(headers);
  const ours = headers[DEAD_LETTER_HEADERS.reason] !== undefined;
  const deathKeys = death?.['routing-keys'];
  const reason = ours ? text(headers[DEAD_LETTER_HEADERS.reason]) : text(death?.reason);
  const queue = ours ? text(headers[DEAD_LETTER_HEADERS.queue]) : text(death?.queue);
  const exchange = ours ? text(headers[DEAD_LETTER_HEADERS.exchange]) : text(death?.exchange);
  const routingKey = ours
    ? text(headers[DEAD_LETTER_HEADERS.routingKey])
    : Array.isArray(deathKeys)
      ? text(deathKeys[0])
      : null;
  const deadLetteredAt = ours ? isoTime(headers[DEAD_LETTER_HEADERS.at]) : isoTime(death?.time);
  const body = message.content.toString('utf8');
  const id = createHash('sha256')
    .update(JSON.stringify([reason, queue, deadLetteredAt, text(message.properties.messageId)]))
    .update(message.content)
    .digest('hex')
    .slice(0, 12);
  return {
    id,
    reason,
    queue,
    exchange,
    routingKey,
    deadLetteredAt,
    deadLetteredBy: ours ? text(headers[DEAD_LETTER_HEADERS.service]) : death ? 'rabbitmq' : null,
    messageId: text(message.properties.messageId),
    type: text(message.properties.type),
    contentType: text(message.properties.contentType),
    sizeBytes: message.content.length,
    replayCount: Number(headers[REPLAY_HEADERS.count] ?? 0) || 0,
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced
    bodyPreview: body.slice(0, PREVIEW_CHARACTERS).replace(/[\u0000-\u001f\u007f]/g, '.'),
  };
}

/** Headers of the replayed copy: the dead-lettering records removed, the replay recorded. */
export function replayHeaders(headers: Headers, replayedBy: string, at: Date = new Date()): Headers {
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
 * The most dead letters one command reads. Reading takes the whole queue (up to this many) and puts
 * it back with one requeue, which keeps the order; the messages past this many are not read, and
 * those read are then put back behind them.
 */
export const DEAD_LETTER_READ_CAP = 10_000;

/** The dead letters one command read: the whole queue, or its first DEAD_LETTER_READ_CAP. */
interface DeadLetterBatch {
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
 * command run right after this one sees them.
 */
async function withDeadLetters<Result>(
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
  return withDeadLetters(amqp, async ({ messages }) => messages.slice(0, limit).map(describeDeadLetter));
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
  return withDeadLetters(amqp, async ({ messages: all, capped }, acknowledge) => {
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
        headers: replayHeaders((properties.headers ?? {}) as Headers, options.replayedBy),
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

/** How many messages wait in the dead-letter queue. */
export async function countDeadLetters(amqp: AmqpClient): Promise<number> {
  return amqp.withChannel(async (channel) => (await channel.checkQueue(DEAD_LETTER_QUEUE)).messageCount);
}
