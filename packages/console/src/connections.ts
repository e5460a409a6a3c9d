import { hostname } from 'node:os';
import { OperatorConnections } from '@lifeguard/operator-views';
import type { Logger } from '@lifeguard/runtime';
import type { ConsoleConfig } from './config.ts';

/**
 * The console's connections, each opened on first use, as the CLI's (OperatorConnections): Redis and
 * RabbitMQ (named `lifeguard-console:<LIFEGUARD_INSTANCE_NAME>`, waiting at most
 * LIFEGUARD_CONSOLE_READ_TIMEOUT_SECONDS to connect), the OpenStack clients, and the incidents.
 * Unlike a worker, the console starts and keeps serving with a broker down: a connection that could not
 * be made is tried again on the next use (once it is made, ioredis and amqplib reconnect by themselves).
 */
export class ConsoleConnections extends OperatorConnections {
  constructor(
    readonly config: ConsoleConfig,
    env: NodeJS.ProcessEnv,
    logger: Logger,
  ) {
    super({
      config,
      env,
      source: { service: 'lifeguard-console', instance: config.LIFEGUARD_INSTANCE_NAME },
      logger,
      connectTimeoutMilliseconds: config.LIFEGUARD_CONSOLE_READ_TIMEOUT_SECONDS * 1000,
      retryFailedConnections: true,
    });
  }

  /** The host name the console runs on (for who did a write action). */
  get machine(): string {
    return hostname();
  }
}
