import type { AddressInfo } from 'node:net';
import {
  createLogger,
  createMetricsRegistry,
  declareEventsTopology,
  GracefulShutdown,
  type Logger,
  listenErrorAsConfigError,
} from '@lifeguard/runtime';
import type { FastifyInstance } from 'fastify';
import { type ConsoleConfig, loadConsoleConfig } from './config.ts';
import { ConsoleConnections } from './connections.ts';
import { type ConsoleState, createConsoleMetrics, readInstanceHaConfig } from './console-state.ts';
import { createConsoleServer } from './http/server.ts';
import { EventFeed } from './live/event-feed.ts';
import { DeadLetterCache } from './readers/dead-letter-cache.ts';

/** Seconds between attempts to follow the events exchange while RabbitMQ cannot be reached. */
export const FEED_RETRY_SECONDS = 5;

export interface StartConsoleOptions {
  /** The environment to read settings from (default: the process's). */
  env?: NodeJS.ProcessEnv;
  /** The logger (default: pino on standard output, LIFEGUARD_LOG_LEVEL, the token redacted). */
  logger?: Logger;
}

/** A running console: its URL, and `stop()` (graceful: open pages and streams closed, brokers closed). */
export interface RunningConsole {
  readonly url: string;
  readonly config: ConsoleConfig;
  readonly logger: Logger;
  readonly server: FastifyInstance;
  readonly feed: EventFeed;
  stop(): Promise<void>;
}

/**
 * Starts the console: reads its settings (ConfigError naming the key), listens on
 * LIFEGUARD_HTTP_HOST:LIFEGUARD_HTTP_PORT (127.0.0.1:9430 by default), and follows the events exchange,
 * trying again every FEED_RETRY_SECONDS while RabbitMQ cannot be reached. Redis, RabbitMQ and Nova may
 * all be down: each page says what it cannot see.
 * @throws ConfigError for invalid settings, and naming LIFEGUARD_HTTP_PORT when the port is taken
 */
export async function startConsole(options: StartConsoleOptions = {}): Promise<RunningConsole> {
  const env = options.env ?? process.env;
  const config = loadConsoleConfig(env);
  const logger =
    options.logger ??
    createLogger({
      service: 'lifeguard-console',
      level: config.LIFEGUARD_LOG_LEVEL,
      instance: config.LIFEGUARD_INSTANCE_NAME,
      pretty: config.LIFEGUARD_LOG_PRETTY,
    });
  const registry = createMetricsRegistry('lifeguard-console');
  const connections = new ConsoleConnections(config, env, logger);
  const feed = new EventFeed(`lifeguard.console.${config.LIFEGUARD_INSTANCE_NAME}.${process.pid}`, logger);
  const state: ConsoleState = {
    config,
    env,
    connections,
    feed,
    registry,
    metrics: createConsoleMetrics(registry),
    deadLetters: new DeadLetterCache(),
    writable: config.LIFEGUARD_CONSOLE_OPERATOR_TOKEN !== undefined,
    instanceHa: () => readInstanceHaConfig(env),
  };
  const server = await createConsoleServer(state, logger);
  await server
    .listen({ host: config.LIFEGUARD_HTTP_HOST, port: config.LIFEGUARD_HTTP_PORT })
    .catch((error: unknown) => {
      throw listenErrorAsConfigError(
        error,
        { port: 'LIFEGUARD_HTTP_PORT', host: 'LIFEGUARD_HTTP_HOST' },
        config.LIFEGUARD_HTTP_HOST,
        config.LIFEGUARD_HTTP_PORT,
      );
    });
  const address = server.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}/`;
  let stopped = false;
  let retry: NodeJS.Timeout | null = null;
  const follow = async (): Promise<void> => {
    try {
      const amqp = await connections.amqp();
      await amqp.declare(declareEventsTopology);
      await feed.start(amqp);
      state.metrics.feedConnected.set(1);
      logger.info('following the events exchange');
    } catch (error) {
      state.metrics.feedConnected.set(0);
      logger.warn(
        { err: error },
        `cannot follow the events exchange; trying again in ${FEED_RETRY_SECONDS} s`,
      );
      if (!stopped) retry = setTimeout(() => void follow(), FEED_RETRY_SECONDS * 1000);
    }
  };
  void follow();
  logger.info(
    { url, writable: state.writable, refreshSeconds: config.LIFEGUARD_CONSOLE_REFRESH_SECONDS },
    `lifeguard console listening on ${url}${state.writable ? '' : ' (read-only)'}`,
  );
  return {
    url,
    config,
    logger,
    server,
    feed,
    async stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      await server.close();
      await feed.stop();
      await connections.close();
    },
  };
}

/**
 * Runs the console as a process: starts it, and on SIGTERM or SIGINT stops it within
 * LIFEGUARD_SHUTDOWN_TIMEOUT_SECONDS.
 */
export async function runConsoleProcess(env: NodeJS.ProcessEnv = process.env): Promise<RunningConsole> {
  const running = await startConsole({ env });
  new GracefulShutdown({
    logger: running.logger,
    timeoutSeconds: running.config.LIFEGUARD_SHUTDOWN_TIMEOUT_SECONDS,
  })
    .add('stop the console', () => running.stop())
    .install();
  return running;
}
