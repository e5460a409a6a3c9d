import type { EventSource } from '@lifeguard/contracts';
import { AmqpClient } from './amqp/amqp-client.ts';
import type { RuntimeConfig } from './config/runtime-config.ts';
import { readTlsFiles } from './config/tls-files.ts';
import { EventJournal } from './events/event-journal.ts';
import { EventPublisher } from './events/event-publisher.ts';
import type { Logger } from './logger.ts';
import { closeRedisClient, type RedisClient } from './redis/redis-client.ts';
import {
  connectRedis,
  type RedisSettings,
  type RedisTopologyConfig,
  redisSettingsFrom,
} from './redis/redis-connection.ts';

/** The runtime settings an operator tool's connections are made from (see runtimeConfigSchema). */
export type ConnectionSettings = RedisTopologyConfig &
  Pick<
    RuntimeConfig,
    'LIFEGUARD_AMQP_URL' | `LIFEGUARD_${'AMQP' | 'REDIS'}_TLS_${'CA' | 'CERT' | 'KEY'}_FILE`
  >;

export interface OnDemandConnectionsOptions {
  /**
   * The runtime's `LIFEGUARD_*` settings as parsed from the environment: the Redis topology and key
   * prefix, LIFEGUARD_AMQP_URL, and each broker's TLS files (TLS_FILE_KEYS, read on each connect).
   */
  readonly config: ConnectionSettings;
  /** Who connects and publishes: connections are named `<service>:<instance>`. */
  readonly source: EventSource;
  readonly logger: Logger;
  /** How long Redis and RabbitMQ may take to answer a connect, in milliseconds. */
  readonly connectTimeoutMilliseconds: number;
  /**
   * True: a connection that could not be made is tried again on the next use (a process that keeps
   * serving with a broker down, the console). False: the first failure is the answer of every later
   * use (one command, the CLI). Once made, ioredis and amqplib reconnect by themselves.
   */
  readonly retryFailedConnections: boolean;
}

/**
 * The connections of an operator tool (the CLI, the console), each opened on its first use from the
 * same environment variables as the workers: Redis (the deployment's key prefix) and RabbitMQ, with
 * the event journal and the publisher built on them. Unlike startService, nothing is opened up front
 * and no topology is declared.
 */
export class OnDemandConnections {
  private redisConnection: Promise<RedisClient> | null = null;
  private amqpConnection: Promise<AmqpClient> | null = null;

  constructor(private readonly options: OnDemandConnectionsOptions) {}

  /** Who publishes events through these connections. */
  get source(): EventSource {
    return this.options.source;
  }

  get logger(): Logger {
    return this.options.logger;
  }

  /** The deployment's Redis key prefix (LIFEGUARD_REDIS_KEY_PREFIX). */
  get keyPrefix(): string {
    return this.options.config.LIFEGUARD_REDIS_KEY_PREFIX;
  }

  /**
   * Redis's address, topology, key prefix and TLS files.
   * @throws ConfigError when a Redis TLS file setting is missing its pair or cannot be read
   */
  get redisSettings(): RedisSettings {
    return redisSettingsFrom(this.options.config, readTlsFiles('redis', this.options.config));
  }

  private get connectionName(): string {
    return `${this.options.source.service}:${this.options.source.instance}`;
  }

  /**
   * Redis, connected.
   * @throws ConfigError (synchronously) when a Redis TLS file setting cannot be used
   * @throws BrokerUnreachableError naming the address, the cause and how to start it
   * @throws BrokerRefusedError when Redis refuses the database index or the password of LIFEGUARD_REDIS_URL
   */
  redis(): Promise<RedisClient> {
    if (!this.redisConnection) {
      const attempt = connectRedis(
        this.redisSettings,
        'default',
        this.connectionName,
        this.options.logger,
        this.options.connectTimeoutMilliseconds,
      );
      this.redisConnection = attempt;
      this.forgetOnFailure(attempt, () => {
        if (this.redisConnection === attempt) this.redisConnection = null;
      });
    }
    return this.redisConnection;
  }

  /**
   * RabbitMQ, connected (one attempt per broker of LIFEGUARD_AMQP_URL).
   * @throws ConfigError (synchronously) when a RabbitMQ TLS file setting cannot be used
   * @throws BrokerUnreachableError naming the address, the cause and how to start it
   * @throws BrokerRefusedError when RabbitMQ refuses the credentials or the vhost of LIFEGUARD_AMQP_URL
   */
  amqp(): Promise<AmqpClient> {
    if (!this.amqpConnection) {
      const attempt = AmqpClient.connect({
        url: this.options.config.LIFEGUARD_AMQP_URL,
        tls: readTlsFiles('amqp', this.options.config),
        connectionName: this.connectionName,
        service: this.options.source.service,
        logger: this.options.logger,
        initialMaxRetries: 1,
        connectTimeoutMilliseconds: this.options.connectTimeoutMilliseconds,
      });
      this.amqpConnection = attempt;
      this.forgetOnFailure(attempt, () => {
        if (this.amqpConnection === attempt) this.amqpConnection = null;
      });
    }
    return this.amqpConnection;
  }

  /** The incidents' event timelines in Redis. */
  async journal(): Promise<EventJournal> {
    return new EventJournal(await this.redis(), this.keyPrefix);
  }

  /** Publishes events as the workers do: confirmed on the events exchange, then journalled. */
  async events(): Promise<EventPublisher> {
    return new EventPublisher(await this.amqp(), this.source, this.logger, await this.journal());
  }

  /** Closes every connection that was made (RabbitMQ first, then Redis); never throws. */
  async close(): Promise<void> {
    const redis = await this.redisConnection?.catch(() => null);
    const amqp = await this.amqpConnection?.catch(() => null);
    await amqp?.close().catch(() => undefined);
    if (redis) await closeRedisClient(redis);
  }

  private forgetOnFailure(attempt: Promise<unknown>, forget: () => void): void {
    if (this.options.retryFailedConnections) attempt.catch(forget);
  }
}
