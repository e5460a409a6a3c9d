import {
  EVENT_SCHEMA_VERSION,
  EVENTS_EXCHANGE,
  eventRoutingKey,
  type LifeguardEventType,
} from '@lifeguard/contracts';
import type { RedisClient } from '@lifeguard/runtime';
import { type AmqpClient, eventMessageOptions } from '@lifeguard/runtime';
import type { Logger } from 'pino';
import type { ProvisioningMetrics } from '../metrics.ts';
import { type OutboxDepth, readOutboxDepth } from './outbox-depth.ts';
import { type OutboxEvent, outboxFieldsOf, readOutboxEntry } from './outbox-entry.ts';
import type { ProvisioningKeys } from './provisioning-keys.ts';

/** The consumer group every relay replica reads the outbox with. */
export const OUTBOX_GROUP = 'relay';

/** One event waiting in the outbox, built and validated from the facts the scripts appended. */
export interface OutboxEntry {
  /** The stream entry id (`<milliseconds>-<sequence>`). */
  readonly streamId: string;
  /** The event id (a UUID), which becomes the AMQP `messageId`. */
  readonly id: string;
  readonly type: LifeguardEventType;
  /** The routing key on the events exchange (eventRoutingKey). */
  readonly routingKey: string;
  /** ISO 8601 time the event occurred. */
  readonly occurredAt: string;
  /** The event's JSON, as published. */
  readonly event: string;
}

/**
 * The publishable entry of an outbox stream entry, or why it is not publishable (its fields are
 * missing or the event they give fails its schema, see readOutboxEntry).
 */
export function toOutboxEntry(
  streamId: string,
  fields: ReadonlyArray<string> | null,
): OutboxEntry | { readonly unpublishable: string } {
  if (!fields) return { unpublishable: 'the entry has no fields' };
  const reading = readOutboxEntry(fields);
  if ('unpublishable' in reading) return reading;
  const { event } = reading;
  return {
    streamId,
    id: event.id,
    type: event.type,
    routingKey: eventRoutingKey(event),
    occurredAt: event.occurredAt,
    event: JSON.stringify(event),
  };
}

export interface OutboxRelayOptions {
  /** For XACK/XDEL/XAUTOCLAIM and gauges. */
  redis: RedisClient;
  /** A dedicated connection for the blocking XREADGROUP (it is held for `blockMilliseconds`). */
  blockingRedis: RedisClient;
  keys: ProvisioningKeys;
  /** This replica's consumer name in the group (unique per process, e.g. `<host>:<pid>`). */
  consumerName: string;
  /** Publishes one entry and resolves only once the broker confirmed it. */
  publish: (entry: OutboxEntry) => Promise<void>;
  logger: Logger;
  metrics?: ProvisioningMetrics | null;
  /** Entries read per round (default 256). */
  batchSize?: number;
  /** How long one XREADGROUP waits for new entries, in milliseconds (default 1000). */
  blockMilliseconds?: number;
  /** Entries another consumer has held unacknowledged this long are claimed, in milliseconds (default 30000). */
  claimIdleMilliseconds?: number;
  /** How often abandoned entries are looked for and the gauges refreshed, in milliseconds (default 5000). */
  claimIntervalMilliseconds?: number;
  /** Wait after a failed publish before retrying, in milliseconds (default 1000). */
  retryDelayMilliseconds?: number;
}

type StreamEntries = Array<[string, string[] | null]>;

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/**
 * Publishes the outbox stream's events with publisher confirms, then acknowledges and deletes them
 * (XACK + XDEL). Replicas share the stream through one consumer group, so each entry goes to one
 * relay; entries a crashed relay read but never acknowledged are claimed by a live one after
 * `claimIdleMilliseconds` (XAUTOCLAIM). Delivery is at least once: a crash between the confirm and
 * the XACK publishes the entry again with the same event id, which subscribers de-duplicate.
 */
export class OutboxRelay {
  private running: Promise<void> | null = null;
  private stopping = false;
  private readonly batchSize: number;
  private readonly blockMilliseconds: number;
  private readonly claimIdleMilliseconds: number;
  private readonly claimIntervalMilliseconds: number;
  private readonly retryDelayMilliseconds: number;

  constructor(private readonly options: OutboxRelayOptions) {
    this.batchSize = options.batchSize ?? 256;
    this.blockMilliseconds = options.blockMilliseconds ?? 1000;
    this.claimIdleMilliseconds = options.claimIdleMilliseconds ?? 30_000;
    this.claimIntervalMilliseconds = options.claimIntervalMilliseconds ?? 5000;
    this.retryDelayMilliseconds = options.retryDelayMilliseconds ?? 1000;
  }

  /** Creates the consumer group when missing (reading from the stream's start) and starts relaying. */
  async start(): Promise<void> {
    await this.ensureGroup();
    this.stopping = false;
    this.running = this.loop();
  }

  /** Stops after the round in flight (at most `blockMilliseconds` plus its publishes). */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.running;
    this.running = null;
  }

  /** True while the relay loop runs. */
  get isRunning(): boolean {
    return this.running !== null && !this.stopping;
  }

  private async ensureGroup(): Promise<void> {
    try {
      await this.options.redis.xgroup('CREATE', this.options.keys.outbox, OUTBOX_GROUP, '0', 'MKSTREAM');
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('BUSYGROUP')) throw error;
    }
  }

  private async loop(): Promise<void> {
    const { logger } = this.options;
    let readOwnPending = true;
    let nextMaintenance = 0;
    while (!this.stopping) {
      try {
        if (Date.now() >= nextMaintenance) {
          await this.claimAbandoned();
          await this.refreshGauges();
          nextMaintenance = Date.now() + this.claimIntervalMilliseconds;
        }
        const entries = await this.read(readOwnPending ? '0' : '>');
        if (entries.length === 0) {
          readOwnPending = false;
          continue;
        }
        if (!(await this.deliver(entries))) {
          readOwnPending = true;
          await sleep(this.retryDelayMilliseconds);
        }
      } catch (error) {
        if (this.stopping) break;
        if (error instanceof Error && error.message.startsWith('NOGROUP')) {
          await this.ensureGroup().catch(() => undefined);
        }
        logger.warn({ err: error }, 'outbox relay round failed; retrying');
        readOwnPending = true;
        await sleep(this.retryDelayMilliseconds);
      }
    }
  }

  /** `>`: new entries (blocking up to blockMilliseconds); `0`: this consumer's unacknowledged ones. */
  private async read(from: '>' | '0'): Promise<StreamEntries> {
    const { blockingRedis, keys, consumerName } = this.options;
    const reply = (await (from === '>'
      ? blockingRedis.xreadgroup(
          'GROUP',
          OUTBOX_GROUP,
          consumerName,
          'COUNT',
          this.batchSize,
          'BLOCK',
          this.blockMilliseconds,
          'STREAMS',
          keys.outbox,
          '>',
        )
      : blockingRedis.xreadgroup(
          'GROUP',
          OUTBOX_GROUP,
          consumerName,
          'COUNT',
          this.batchSize,
          'STREAMS',
          keys.outbox,
          '0',
        ))) as Array<[string, StreamEntries]> | null;
    return reply?.[0]?.[1] ?? [];
  }

  /**
   * Publishes every entry concurrently, then XACK+XDELs the confirmed ones in one transaction.
   * @returns true when every entry was published
   */
  private async deliver(entries: StreamEntries): Promise<boolean> {
    const { redis, keys, publish, logger, metrics } = this.options;
    const done: string[] = [];
    const unpublishable: Array<{ streamId: string; fields: string[] | null; reason: string }> = [];
    const publishes: Array<Promise<void>> = [];
    for (const [streamId, fields] of entries) {
      const entry = toOutboxEntry(streamId, fields);
      if ('unpublishable' in entry) {
        unpublishable.push({ streamId, fields, reason: entry.unpublishable });
        continue;
      }
      publishes.push(
        publish(entry).then(() => {
          done.push(streamId);
          metrics?.outboxPublished.inc({ type: entry.type });
        }),
      );
    }
    const results = await Promise.allSettled(publishes);
    const failures = results.filter((result) => result.status === 'rejected');
    if (failures.length > 0) {
      metrics?.outboxPublishFailures.inc(failures.length);
      logger.warn(
        { err: (failures[0] as PromiseRejectedResult).reason, failed: failures.length },
        'outbox events not confirmed by the broker; they stay in the outbox and are retried',
      );
    }
    const transaction = redis.multi();
    for (const { streamId, fields, reason } of unpublishable) {
      // Kept aside for an operator, with the reason, instead of blocking the relay or being lost.
      logger.error({ streamId, fields, reason }, 'unpublishable outbox entry moved to the dead outbox');
      transaction.xadd(keys.deadOutbox, '*', 'streamId', streamId, 'reason', reason, ...(fields ?? []));
      metrics?.outboxDeadLettered.inc();
      done.push(streamId);
    }
    if (done.length > 0) {
      transaction.xack(keys.outbox, OUTBOX_GROUP, ...done);
      transaction.xdel(keys.outbox, ...done);
      await transaction.exec();
    } else {
      transaction.discard();
    }
    return failures.length === 0;
  }

  /** Takes over entries other relays read but did not acknowledge within claimIdleMilliseconds. */
  private async claimAbandoned(): Promise<void> {
    const { redis, keys, consumerName, metrics, logger } = this.options;
    let cursor = '0-0';
    for (let round = 0; round < 100; round++) {
      const [next, claimed, deleted] = (await redis.xautoclaim(
        keys.outbox,
        OUTBOX_GROUP,
        consumerName,
        this.claimIdleMilliseconds,
        cursor,
        'COUNT',
        this.batchSize,
      )) as [string, StreamEntries, string[]?];
      if (deleted && deleted.length > 0) await redis.xack(keys.outbox, OUTBOX_GROUP, ...deleted);
      if (claimed.length > 0) {
        metrics?.outboxClaimed.inc(claimed.length);
        logger.info({ count: claimed.length }, 'claimed outbox entries abandoned by another relay');
        await this.deliver(claimed);
      }
      cursor = next;
      if (cursor === '0-0') break;
    }
    await this.forgetIdleConsumers();
  }

  /** Removes consumers of stopped relays once they hold nothing, so the group does not grow forever. */
  private async forgetIdleConsumers(): Promise<void> {
    const { redis, keys, consumerName } = this.options;
    const consumers = (await redis.xinfo('CONSUMERS', keys.outbox, OUTBOX_GROUP)) as Array<
      Array<string | number>
    >;
    const idleLimit = Math.max(this.claimIdleMilliseconds * 2, 60_000);
    for (const fields of consumers) {
      const info: Record<string, string | number> = {};
      for (let index = 0; index + 1 < fields.length; index += 2)
        info[String(fields[index])] = fields[index + 1]!;
      if (info.name === consumerName) continue;
      if (Number(info.pending) === 0 && Number(info.idle) > idleLimit) {
        await redis.xgroup('DELCONSUMER', keys.outbox, OUTBOX_GROUP, String(info.name));
      }
    }
  }

  /** Outbox depth (entries not yet published and trimmed) and the age of the oldest, in seconds. */
  depthAndLag(): Promise<OutboxDepth> {
    return readOutboxDepth(this.options.redis, this.options.keys.outbox, Date.now());
  }

  private async refreshGauges(): Promise<void> {
    const { metrics } = this.options;
    if (!metrics) return;
    const { depth, lagSeconds } = await this.depthAndLag();
    metrics.outboxDepth.set(depth);
    metrics.outboxLagSeconds.set(lagSeconds);
  }
}

/**
 * Publishes an outbox entry to the events exchange (routing key as stored, e.g.
 * `provisioning.complete.port`) with the same AMQP properties as every lifeguard event
 * (`eventMessageOptions`: persistent, `messageId` = event id), and resolves on the broker's confirm.
 */
export function publishOutboxEntryTo(
  amqp: Pick<AmqpClient, 'publish'>,
): (entry: OutboxEntry) => Promise<void> {
  return (entry) =>
    amqp.publish(
      EVENTS_EXCHANGE,
      entry.routingKey,
      Buffer.from(entry.event),
      eventMessageOptions({
        id: entry.id,
        type: entry.type,
        occurredAt: entry.occurredAt,
        schemaVersion: EVENT_SCHEMA_VERSION,
      }),
    );
}

/**
 * Appends an event to the outbox on its own (for events with no state change to commit with them),
 * as its facts (outboxFieldsOf). The relay builds and publishes it like every other entry.
 */
export async function appendToOutbox(
  redis: RedisClient,
  keys: ProvisioningKeys,
  event: OutboxEvent,
): Promise<void> {
  await redis.xadd(keys.outbox, '*', ...outboxFieldsOf(event));
}
