import { createHash } from 'node:crypto';
import { DEAD_LETTER_HEADERS, REPLAY_HEADERS } from '@lifeguard/contracts';
import type { GetMessage } from 'amqplib';

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

const PREVIEW_CHARACTERS = 160;

/** A message's AMQP headers. */
export type MessageHeaders = Record<string, unknown>;

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
function firstDeath(headers: MessageHeaders): MessageHeaders | null {
  const deaths = headers['x-death'];
  return Array.isArray(deaths) && deaths.length > 0 ? (deaths[0] as MessageHeaders) : null;
}

/** Describes a message fetched from the dead-letter queue. */
export function describeDeadLetter(message: Pick<GetMessage, 'content' | 'properties'>): DeadLetter {
  const headers = (message.properties.headers ?? {}) as MessageHeaders;
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
