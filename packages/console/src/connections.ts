import { hostname } from 'node:os';
import { IncidentStore } from '@lifeguard/instance-ha';
import { createOpenStackClients, type OpenStackClients } from '@lifeguard/openstack';
import { type Logger, OnDemandConnections } from '@lifeguard/runtime';
import type { ConsoleConfig } from './config.ts';

/**
 * The console's connections, each opened on first use: Redis and RabbitMQ as the CLI opens them
 * (OnDemandConnections, named `lifeguard-console:<LIFEGUARD_INSTANCE_NAME>`, waiting at most
 * LIFEGUARD_CONSOLE_READ_TIMEOUT_SECONDS to connect), and the OpenStack clients.
 * Unlike a worker, the console starts and keeps serving with a broker down: a connection that could not
 * be made is tried again on the next use (once it is made, ioredis and amqplib reconnect by themselves).
 */
export class ConsoleConnections extends OnDemandConnections {
  private clients: OpenStackClients | null = null;

  constructor(
    readonly config: ConsoleConfig,
    private readonly env: NodeJS.ProcessEnv,
    logger: Logger,
  ) {
    super({
      config,
      source: { service: 'lifeguard-console', instance: config.LIFEGUARD_INSTANCE_NAME },
      logger,
      connectTimeoutMilliseconds: config.LIFEGUARD_CONSOLE_READ_TIMEOUT_SECONDS * 1000,
      retryFailedConnections: true,
    });
  }

  /** Nova and Glance. @throws CloudConfigError when no cloud is configured */
  openstack(): OpenStackClients {
    this.clients ??= createOpenStackClients({ env: this.env, logger: this.logger });
    return this.clients;
  }

  async incidents(): Promise<IncidentStore> {
    return new IncidentStore(await this.redis(), this.keyPrefix);
  }

  /** The host name the console runs on (for who did a write action). */
  get machine(): string {
    return hostname();
  }
}
