import { DEAD_LETTER_EXCHANGE, DEAD_LETTER_HEADERS } from '@lifeguard/contracts';
import type { Channel, ChannelModel, ConsumeMessage, RecoveringChannelModel } from 'amqplib';
import * as amqp from 'amqplib';
import type { Logger } from 'pino';
import { redactUrl } from '../config/secret-keys.ts';
import type { TlsFiles } from '../config/tls-files.ts';
import type { AmqpMetrics } from './amqp-metrics.ts';
import { BrokerAddresses, parseAmqpUrlList } from './broker-addresses.ts';
import { amqpSocket, coalesceWrites } from './coalesced-writes.ts';
import { amqpConnectFailure } from './connect-failure.ts';
import { type ConsumerOptions, ManagedConsumer } from './consumer.ts';
import { ConfirmedPublisher, type PublishOptions } from './publisher.ts';
import { declareDeadLetterTopology, type TopologyDeclaration } from './topology.ts';

export interface AmqpClientOptions {
  /**
   * `amqp://user:password@host:port/vhost`, or several RabbitMQ nodes' addresses (a comma-separated
   * list, or oslo's `rabbit://user:pass@h1:5672,user:pass@h2:5672/vhost`; see parseAmqpUrlList),
   * tried in turn; logged with passwords masked.
   */
  url: string;
  /** Shown in the RabbitMQ management UI (`connection_name` client property). */
  connectionName: string;
  /** The service name written in dead-letter headers. */
  service: string;
  logger: Logger;
  metrics?: AmqpMetrics;
  /** Attempts before giving up at start-up (default 3); once connected it retries forever. */
  initialMaxRetries?: number;
  /** AMQP heartbeat in seconds (default: the server's, 60 on RabbitMQ). */
  heartbeatSeconds?: number;
  /**
   * How long one connection attempt may go without an answer before it fails with
   * `connect ETIMEDOUT`, in milliseconds (default 10000): a host that drops packets, or something
   * other than RabbitMQ on the port, would otherwise hold start-up forever.
   */
  connectTimeoutMilliseconds?: number;
  /** CA, client certificate and key for an `amqps://` URL (LIFEGUARD_AMQP_TLS_CA_FILE, LIFEGUARD_AMQP_TLS_CERT_FILE, LIFEGUARD_AMQP_TLS_KEY_FILE); default Node's CAs. */
  tls?: TlsFiles;
}

/** How many connections a declaration is tried on before its error is thrown (declare). */
const DECLARE_ATTEMPTS = 5;

/** AMQP 0-9-1's channel-level reply codes: content-too-large, no-route, no-consumers, access-refused, not-found, resource-locked, precondition-failed. */
const CHANNEL_REPLY_CODES = new Set([311, 312, 313, 403, 404, 405, 406]);

/**
 * True when RabbitMQ refused a declaration itself (it closed the channel with a channel-level reply
 * code), as against a connection lost under the declaration (no code, or a connection-level one:
 * 320 connection-forced, 541 internal-error, ...).
 */
export function declarationRefused(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' && CHANNEL_REPLY_CODES.has(code);
}

/**
 * One AMQP connection with amqplib's built-in recovery, plus what recovery leaves out: topology
 * re-declaration after every reconnect, consumers that come back after connection loss, channel errors
 * and broker cancels, confirmed publishing with `mandatory` and return handling, and application-level
 * dead-lettering with the reason in headers (DEAD_LETTER_HEADERS).
 */
export class AmqpClient {
  private readonly topology: TopologyDeclaration[] = [declareDeadLetterTopology];
  private readonly consumers = new Set<ManagedConsumer<never>>();
  private readonly publisher: ConfirmedPublisher;
  private connected = false;
  private blocked = false;
  private closing = false;
  private everConnected = false;
  /** The live connection, set by setup() after each (re)connect and cleared on disconnect. */
  private model: ChannelModel | null = null;
  /** The address of the last failed connection attempt (what a start-up failure reports). */
  private lastFailedUrl: string | null = null;

  private constructor(
    private readonly connection: RecoveringChannelModel,
    private readonly options: AmqpClientOptions,
    private readonly addresses: BrokerAddresses,
  ) {
    this.publisher = new ConfirmedPublisher(
      () => this.connection.createConfirmChannel(),
      options.logger,
      options.metrics ?? null,
    );
  }

  /**
   * Connects (retrying `initialMaxRetries` times) and declares the dead-letter topology.
   * @throws BrokerUnreachableError when no connection could be made (refused, timed out, unknown
   *   host): the address (password masked), the cause and how to start RabbitMQ
   * @throws BrokerRefusedError (a ConfigError naming LIFEGUARD_AMQP_URL) when RabbitMQ refused the
   *   user name and password or the vhost, with its answer and the rabbitmqctl commands that fix it
   */
  static async connect(options: AmqpClientOptions): Promise<AmqpClient> {
    let client: AmqpClient | null = null;
    const addresses = new BrokerAddresses(parseAmqpUrlList(options.url), options.heartbeatSeconds);
    const connection = await amqp.connect(addresses.connectOptions(), {
      clientProperties: { connection_name: options.connectionName },
      timeout: options.connectTimeoutMilliseconds ?? 10_000,
      ...options.tls,
      recovery: {
        initialDelay: 200,
        maxDelay: 10_000,
        // Every node of the list is tried at least once before start-up gives up.
        initialMaxRetries: options.initialMaxRetries ?? Math.max(3, addresses.urls.length),
        maxRetries: Number.POSITIVE_INFINITY,
        waitForConnect: false,
        setup: async (model: ChannelModel) => {
          if (client) await client.setup(model);
        },
      },
    });
    client = new AmqpClient(connection, options, addresses);
    client.watch();
    try {
      await connection.waitForConnect();
    } catch (error) {
      await connection.close().catch(() => undefined);
      throw await amqpConnectFailure(client.lastFailedUrl ?? addresses.current, error);
    }
    return client;
  }

  private watch(): void {
    const { logger, metrics } = this.options;
    this.connection.on('connect', () => {
      if (this.everConnected) metrics?.reconnects.inc();
      this.everConnected = true;
      this.connected = true;
      metrics?.connected.set(1);
      logger.info({ url: redactUrl(this.addresses.current) }, 'AMQP connected');
    });
    // A failed attempt or a lost connection moves to the next node of the list.
    this.connection.on('connect-failed', (error: Error) => {
      this.lastFailedUrl = this.addresses.current;
      const failed = redactUrl(this.addresses.current);
      const next = redactUrl(this.addresses.advance());
      if (this.addresses.urls.length > 1)
        logger.warn(
          { err: error, url: failed, next },
          'AMQP connection attempt failed; trying the next node',
        );
    });
    this.connection.on('disconnect', (error: Error) => {
      this.connected = false;
      this.model = null;
      this.publisher.reset();
      metrics?.connected.set(0);
      const lost = redactUrl(this.addresses.current);
      const next = redactUrl(this.addresses.advance());
      if (!this.closing) logger.warn({ err: error, url: lost, next }, 'AMQP connection lost; reconnecting');
    });
    this.connection.on('reconnect-scheduled', (info: { attempt: number; delay: number }) =>
      logger.info({ attempt: info.attempt, delayMilliseconds: info.delay }, 'AMQP reconnect scheduled'),
    );
    // Before the first connection, connect() throws the refusal with its remedy: no second, raw report.
    this.connection.on('reconnect-failed', (error: Error) => {
      if (this.everConnected) logger.error({ err: error }, 'AMQP recovery gave up');
    });
    this.connection.on('blocked', (reason: string) => {
      this.blocked = true;
      metrics?.blocked.set(1);
      logger.warn({ reason }, 'RabbitMQ blocked publishing on this connection');
    });
    this.connection.on('unblocked', () => {
      this.blocked = false;
      metrics?.blocked.set(0);
      logger.info('RabbitMQ unblocked publishing');
    });
    this.connection.on('error', (error: Error) => logger.warn({ err: error }, 'AMQP connection error'));
  }

  /** Runs after every (re)connect, before the connection is handed out: topology, then consumers. */
  private async setup(model: ChannelModel): Promise<void> {
    // amqplib listens for the connection's errors only once this set-up has succeeded: a socket reset
    // under it (a broker restarting, a load balancer, a network flap) would be an unhandled 'error'
    // event, which ends the process. Logged here instead; the set-up then fails and is tried again.
    const setupError = (error: Error) =>
      this.options.logger.warn({ err: error }, 'AMQP connection failed while it was being set up');
    // Left on a connection whose set-up failed: amqplib discards it, and may still report on it.
    model.on('error', setupError);
    this.model = model;
    const socket = amqpSocket(model);
    if (socket) coalesceWrites(socket);
    const channel = await model.createChannel();
    try {
      for (const declare of this.topology) await declare(channel);
    } finally {
      await channel.close().catch(() => undefined);
    }
    for (const consumer of this.consumers) await consumer.start(model);
    model.removeListener('error', setupError);
  }

  /** True while connected and not blocked by a broker alarm. */
  get isHealthy(): boolean {
    return this.connected && !this.blocked;
  }

  /** True while every consumer has a live channel. */
  get consumersAlive(): boolean {
    return [...this.consumers].every((consumer) => consumer.isStopped || consumer.isConsuming);
  }

  /**
   * Declares topology now and again after every reconnect. A connection lost under the declaration
   * is waited out: it is declared again on the next connection (up to DECLARE_ATTEMPTS of them).
   * @throws the broker's error (e.g. 406 PRECONDITION_FAILED for an inequivalent redeclaration)
   */
  async declare(declaration: TopologyDeclaration): Promise<void> {
    this.topology.push(declaration);
    for (let attempt = 1; ; attempt++) {
      const channel = await this.connection.createChannel();
      try {
        await declaration(channel);
        return;
      } catch (error) {
        // The broker refusing the declaration itself (its channel closed with a code: 406, 403, ...)
        // is the caller's to see. A connection lost meanwhile (a channel ended without a reply, a
        // broker closing the connection under load with 541) is not: the next channel waits for the
        // reconnect, whose setup declares the whole topology again, this declaration included.
        if (declarationRefused(error) || this.closing || attempt >= DECLARE_ATTEMPTS) {
          // Not declared again after a reconnect either: every setup would fail on it.
          this.topology.splice(this.topology.indexOf(declaration), 1);
          throw error;
        }
        this.options.logger.warn(
          { err: error, attempt },
          'AMQP topology declaration cut off by a lost connection; declaring it again once reconnected',
        );
      } finally {
        await channel.close().catch(() => undefined);
      }
    }
  }

  /** Runs `work` on a short-lived channel (passive checks, queue inspection, purges). */
  async withChannel<Result>(work: (channel: Channel) => Promise<Result>): Promise<Result> {
    const channel = await this.connection.createChannel();
    channel.on('error', () => undefined);
    try {
      return await work(channel);
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  /**
   * Publishes and waits for RabbitMQ's confirm; see ConfirmedPublisher.publish.
   * @throws UnroutableMessageError, PublishNotConfirmedError
   */
  publish(exchange: string, routingKey: string, content: Buffer, options?: PublishOptions): Promise<void> {
    return this.publisher.publish(exchange, routingKey, content, options);
  }

  /**
   * Starts a consumer that survives reconnects, channel errors and broker cancels.
   * @returns a handle whose `stop()` cancels it and waits for in-flight handlers
   */
  async consume<Payload>(options: ConsumerOptions<Payload>): Promise<ManagedConsumer<Payload>> {
    const consumer = new ManagedConsumer<Payload>(
      options,
      (message, queue, reason) => this.deadLetter(message, queue, reason),
      this.options.logger.child({ queue: options.queue }),
      this.options.metrics ?? null,
    );
    this.consumers.add(consumer as unknown as ManagedConsumer<never>);
    // While disconnected, the next setup() starts it on the new connection.
    if (!this.model) return consumer;
    try {
      await consumer.start(this.model);
    } catch (error) {
      // As in declare(): the broker refusing the consumer's queue (404, 406, ...) is the caller's to
      // see. A connection lost under the start (a 541 from a broker under load) is not: the consumer
      // stays registered, and it starts again on this connection if it lives, else on the next one.
      if (declarationRefused(error) || this.closing) {
        this.consumers.delete(consumer as unknown as ManagedConsumer<never>);
        throw error;
      }
      this.options.logger.warn(
        { err: error, queue: options.queue },
        'AMQP consumer start cut off by a lost connection; it starts once reconnected',
      );
      consumer.restartLater('start cut off by a lost connection');
    }
    return consumer;
  }

  /**
   * Publishes a copy of `message` to the dead-letter exchange with the reason and its origin in headers
   * (routing key = the original queue), confirmed, keeping its `messageId`, `type`, `timestamp`,
   * content type and encoding and correlation id, and its headers unless they take more than
   * DEAD_LETTER_KEPT_HEADERS_BYTES (then `x-lifeguard-original-headers-dropped: "<n> bytes"` says
   * so: with the reason added they could outgrow the 64 KiB a header table may take, and the copy
   * could never be published). The caller acks the original afterwards.
   */
  async deadLetter(message: ConsumeMessage, queue: string, reason: string): Promise<void> {
    const headers = {
      ...keptHeaders(message.properties.headers ?? {}),
      [DEAD_LETTER_HEADERS.reason]: reason.slice(0, 2000),
      [DEAD_LETTER_HEADERS.queue]: queue,
      [DEAD_LETTER_HEADERS.exchange]: message.fields.exchange,
      [DEAD_LETTER_HEADERS.routingKey]: message.fields.routingKey,
      [DEAD_LETTER_HEADERS.at]: new Date().toISOString(),
      [DEAD_LETTER_HEADERS.service]: this.options.service,
    };
    const { properties } = message;
    await this.publisher.publish(DEAD_LETTER_EXCHANGE, queue, message.content, {
      headers,
      persistent: true,
      ...(properties.contentType ? { contentType: properties.contentType } : {}),
      ...(properties.contentEncoding ? { contentEncoding: properties.contentEncoding } : {}),
      ...(properties.correlationId ? { correlationId: properties.correlationId } : {}),
      ...(properties.type ? { type: properties.type } : {}),
      // Kept so a replayed message is still recognised by subscribers that de-duplicate on it.
      ...(properties.messageId ? { messageId: properties.messageId } : {}),
      ...(properties.timestamp ? { timestamp: properties.timestamp } : {}),
    });
  }

  /** Stops consumers (waiting for in-flight handlers), flushes confirms, closes the connection. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.consumers].map((consumer) => consumer.stop()));
    await this.publisher.close();
    await this.connection.close().catch(() => undefined);
  }
}

/** How large (JSON bytes) a dead-lettered message's own headers may be to be kept on its copy. */
export const DEAD_LETTER_KEPT_HEADERS_BYTES = 32 * 1024;

/** A message's headers as its dead-letter copy keeps them (see AmqpClient.deadLetter). */
function keptHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  let size: number;
  try {
    size = Buffer.byteLength(JSON.stringify(headers));
  } catch {
    size = Number.POSITIVE_INFINITY;
  }
  if (size <= DEAD_LETTER_KEPT_HEADERS_BYTES) return headers;
  return { 'x-lifeguard-original-headers-dropped': `${Number.isFinite(size) ? size : 'unmeasurable'} bytes` };
}
