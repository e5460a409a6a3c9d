import { hostname } from 'node:os';
import type { EventSource } from '@lifeguard/contracts';
import { IncidentStore } from '@lifeguard/instance-ha';
import { createOpenStackClients, type OpenStackClients } from '@lifeguard/openstack';
import {
  AmqpClient,
  connectRedis,
  EventJournal,
  EventPublisher,
  type Logger,
  type RedisClient,
  readTlsFiles,
  redisSettingsFrom,
} from '@lifeguard/runtime';
import type { ConsoleConfig } from './config.ts';

/**
 * The console's connections, each opened on first use: Redis, RabbitMQ and the OpenStack clients.
 * Unlike a worker, the console starts and keeps serving with a broker down: a connection that could not
 * be made is tried again on the next use (once it is made, ioredis and amqplib reconnect by themselves).
 */
export class ConsoleConnections {
  private redisConnection: Promise<RedisClient> | null = null;
  private amqpConnection: Promise<AmqpClient> | null = null;
  private clients: OpenStackClients | null = null;
  /** Who publishes the console's events: service `lifeguard-console`, its instance name. */
  readonly source: EventSource;

  constructor(
    readonly config: ConsoleConfig,
    private readonly env: NodeJS.ProcessEnv,
    readonly logger: Logger,
  ) {
    this.source = { service: 'lifeguard-console', instance: config.LIFEGUARD_INSTANCE_NAME };
  }

  get keyPrefix(): string {
    return this.config.LIFEGUARD_REDIS_KEY_PREFIX;
  }

  private get connectMilliseconds(): number {
    return this.config.LIFEGUARD_CONSOLE_READ_TIMEOUT_SECONDS * 1000;
  }

  /**
   * Redis, connected.
   * @throws BrokerUnreachableError or BrokerRefusedError (see connectRedis); the next call tries again
   */
  redis(): Promise<RedisClient> {
    if (!this.redisConnection) {
      const attempt = connectRedis(
        { ...redisSettingsFrom(this.config, readTlsFiles('redis', this.config)), keyPrefix: this.keyPrefix },
        'default',
        `lifeguard-console:${this.source.instance}`,
        this.logger,
        this.connectMilliseconds,
      );
      this.redisConnection = attempt;
      attempt.catch(() => {
        if (this.redisConnection === attempt) this.redisConnection = null;
      });
    }
    return this.redisConnection;
  }

  /**
   * RabbitMQ, connected.
   * @throws BrokerUnreachableError or BrokerRefusedError (see AmqpClient.connect); the next call tries again
   */
  amqp(): Promise<AmqpClient> {
    if (!this.amqpConnection) {
      const attempt = AmqpClient.connect({
        url: this.config.LIFEGUARD_AMQP_URL,
        connectionName: `lifeguard-console:${this.source.instance}`,
        service: 'lifeguard-console',
        logger: this.logger,
        initialMaxRetries: 1,
        connectTimeoutMilliseconds: this.connectMilliseconds,
      });
      this.amqpConnection = attempt;
      attempt.catch(() => {
        if (this.amqpConnection === attempt) this.amqpConnection = null;
      });
    }
    return this.amqpConnection;
  }

  /** Nova and Glance. @throws CloudConfigError when no cloud is configured */
  openstack(): OpenStackClients {
    this.clients ??= createOpenStackClients({ env: this.env, logger: this.logger });
    return this.clients;
  }

  async incidents(): Promise<IncidentStore> {
    return new IncidentStore(await this.redis(), this.keyPrefix);
  }

  async journal(): Promise<EventJournal> {
    return new EventJournal(await this.redis(), this.keyPrefix);
  }

  /** Publishes as the workers do: confirmed on the events exchange, then journalled. */
  async events(): Promise<EventPublisher> {
    return new EventPublisher(await this.amqp(), this.source, this.logger, await this.journal());
  }

  /** The host name the console runs on (for who did a write action). */
  get machine(): string {
    return hostname();
  }

  /** Closes what was opened. */
  async close(): Promise<void> {
    const redis = await this.redisConnection?.catch(() => null);
    const amqp = await this.amqpConnection?.catch(() => null);
    await amqp?.close().catch(() => undefined);
    if (redis) await redis.quit().catch(() => redis.disconnect());
  }
}
