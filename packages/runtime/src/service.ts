import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { EventSource } from '@lifeguard/contracts';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { AmqpClient } from './amqp/amqp-client.ts';
import { createAmqpMetrics } from './amqp/amqp-metrics.ts';
import { declareEventsTopology } from './amqp/topology.ts';
import { environmentSource } from './config/parse-config.ts';
import { loadRuntimeConfig, type RuntimeConfig } from './config/runtime-config.ts';
import { redactUrl } from './config/secret-keys.ts';
import { readTlsFiles } from './config/tls-files.ts';
import { type OwnVariables, unknownVariables } from './config/unknown-variables.ts';
import { type BrokerRefusedError, BrokerUnreachableError, ConfigError } from './errors.ts';
import { EventJournal } from './events/event-journal.ts';
import { EventPublisher } from './events/event-publisher.ts';
import { AdminServer } from './http/admin-server.ts';
import { createMetricsRegistry } from './http/metrics-registry.ts';
import { createLogger } from './logger.ts';
import { closeRedisClient, type RedisClient } from './redis/redis-client.ts';
import {
  connectRedis,
  type RedisExtraOptions,
  type RedisRole,
  type RedisSettings,
  redisSettingsFrom,
} from './redis/redis-connection.ts';
import { REDIS_REFUSED_EVENT } from './redis/redis-refusal.ts';
import { RedisWriteRefusalWatch } from './redis/redis-write-refusal-watch.ts';
import { WorkerRegistry } from './redis/worker-registry.ts';
import { GracefulShutdown, withTimeout } from './shutdown.ts';

/** Everything a worker process shares: configuration, logging, metrics, brokers, health, shutdown. */
export interface ServiceContext {
  readonly service: string;
  readonly config: RuntimeConfig;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly amqp: AmqpClient;
  readonly redis: RedisClient;
  readonly redisSettings: RedisSettings;
  readonly events: EventPublisher;
  readonly journal: EventJournal;
  readonly admin: AdminServer;
  readonly shutdown: GracefulShutdown;
  readonly source: EventSource;
  /** This process's record in the worker registry (written by `finishStartup`, deleted at shutdown). */
  readonly workers: WorkerRegistry;
  /** Whether Redis still accepts writes (OOM, MISCONF): its gauge, error log line and `redis-writes` readiness check. */
  readonly redisWrites: RedisWriteRefusalWatch;
  /**
   * Opens another Redis connection (BullMQ workers need their own, role `worker`), of the same kind
   * as `redis` (one server, through Sentinel, or a Redis Cluster); `options` adds ioredis options
   * (e.g. `enableAutoPipelining`). Like `redis`, when Redis refuses it on a
   * reconnect (database index, password) the process shuts down with exit status 78.
   * @throws BrokerUnreachableError, BrokerRefusedError (see connectRedis)
   */
  connectRedis(role: RedisRole, name: string, options?: RedisExtraOptions): Promise<RedisClient>;
}

export interface StartServiceOptions {
  /** The service name (`provisioning-blocks`, `node-monitor`, ...). */
  service: string;
  /** The health/metrics port used when LIFEGUARD_HTTP_PORT is not set. */
  defaultHttpPort: number;
  env?: NodeJS.ProcessEnv;
  /** The version written in the worker registry (default: the runtime package's version). */
  version?: string;
  /**
   * The worker's own variables: each other variable set under their prefixes is logged at warn
   * before any broker is contacted, with the variable it most likely misspells (unknownVariables).
   */
  ownVariables?: OwnVariables;
}

/** How long a shutdown step that talks to Redis may take before it is given up (milliseconds). */
const REDIS_SHUTDOWN_STEP_MILLISECONDS = 3000;

/** The runtime package's version, read once from its package.json. */
export const RUNTIME_VERSION: string = (() => {
  try {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return manifest.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
})();

/**
 * Starts the shared parts of a worker, in order: configuration (stops with ConfigError naming the
 * key), logger, metrics, Redis and RabbitMQ (stops with BrokerUnreachableError naming the address and
 * how to start it, or BrokerRefusedError when a broker refuses the login, vhost or database of its
 * URL), the health/metrics server, and SIGTERM/SIGINT handling. When Redis refuses a reconnect later
 * (REDIS_REFUSED_EVENT), the process shuts down with exit status 78. The shutdown sequence
 * marks the process not ready first; a worker adds its own steps (stop consuming, close BullMQ) with
 * `shutdown.add` before calling `finishStartup`, and the brokers are closed last. `finishStartup`
 * also registers the process in the worker registry (`<prefix>:workers:<service>:<instance>`, see
 * WorkerRegistry), which shutdown removes before closing Redis. `/readyz` answers 503 until
 * `finishStartup` (the worker's own readiness checks are added before it).
 */
export async function startService(
  options: StartServiceOptions,
): Promise<ServiceContext & { finishStartup(): void }> {
  const config = loadRuntimeConfig({ httpPort: options.defaultHttpPort }, [environmentSource(options.env)]);
  const logger = createLogger({
    service: options.service,
    level: config.LIFEGUARD_LOG_LEVEL,
    instance: config.LIFEGUARD_INSTANCE_NAME,
    pretty: config.LIFEGUARD_LOG_PRETTY,
  });
  warnOfUnknownVariables(logger, options);
  const registry = createMetricsRegistry(options.service);
  const redisTls = readTlsFiles('redis', config);
  const amqpTls = readTlsFiles('amqp', config);
  const redisSettings: RedisSettings = redisSettingsFrom(config, redisTls);
  const connectionName = (role: string) => `${options.service}:${role}:${config.LIFEGUARD_INSTANCE_NAME}`;
  const { redis, amqp } = await connectBrokers({
    service: options.service,
    config,
    logger,
    registry,
    redisSettings,
    amqpTls,
    connectionName,
  });
  const source: EventSource = { service: options.service, instance: config.LIFEGUARD_INSTANCE_NAME };
  const journal = new EventJournal(redis, redisSettings.keyPrefix);
  const events = new EventPublisher(amqp, source, logger, journal);
  const workers = new WorkerRegistry(redis, redisSettings.keyPrefix, { logger });
  const redisWrites = new RedisWriteRefusalWatch({
    redis,
    keyPrefix: redisSettings.keyPrefix,
    instance: config.LIFEGUARD_INSTANCE_NAME,
    logger,
    registry,
  });
  const admin = await startAdminServer({ config, registry, logger, amqp, redis, redisWrites });
  redisWrites.start();
  const shutdown = new GracefulShutdown({
    logger,
    timeoutSeconds: config.LIFEGUARD_SHUTDOWN_TIMEOUT_SECONDS,
  });
  shutdown.add('mark not ready', () => admin.markShuttingDown());
  shutdown.add('stop watching whether Redis accepts writes', () => redisWrites.stop());
  const redisConnections = redisConnectionsOf({ redis, redisSettings, connectionName, logger, shutdown });
  logger.info(
    {
      amqp: redactUrl(config.LIFEGUARD_AMQP_URL),
      redis: redactUrl(config.LIFEGUARD_REDIS_URL),
      http: admin.port,
    },
    `${options.service} starting`,
  );
  const context: ServiceContext = {
    service: options.service,
    config,
    logger,
    registry,
    amqp,
    redis,
    redisSettings,
    events,
    journal,
    admin,
    shutdown,
    source,
    workers,
    redisWrites,
    connectRedis: redisConnections.connect,
  };
  return { ...context, finishStartup: () => finishStartup(context, options.version, redisConnections.all) };
}

/** One warning for each variable under the worker's own prefixes that it does not read. */
function warnOfUnknownVariables(logger: Logger, options: StartServiceOptions): void {
  if (!options.ownVariables) return;
  for (const { variable, meant, problem } of unknownVariables(
    options.env ?? process.env,
    options.ownVariables,
  ))
    logger.warn({ variable, meant }, `${variable}: ${problem}`);
}

/**
 * The process's Redis connections: the default one and each `connectRedis` makes. Every one shuts
 * the process down when Redis refuses it on a reconnect, and `all` is what the last shutdown step
 * closes (after the workers' own steps).
 */
function redisConnectionsOf(parts: {
  redis: RedisClient;
  redisSettings: RedisSettings;
  connectionName: (role: string) => string;
  logger: Logger;
  shutdown: GracefulShutdown;
}): { all: ReadonlyArray<RedisClient>; connect: ServiceContext['connectRedis'] } {
  const { redis, redisSettings, connectionName, logger, shutdown } = parts;
  const all: RedisClient[] = [shutDownWhenRefused(redis, shutdown)];
  return {
    all,
    connect: async (role, name, options) => {
      const client = await connectRedis(
        redisSettings,
        role,
        connectionName(name),
        logger,
        5000,
        options ?? {},
      );
      all.push(client);
      return shutDownWhenRefused(client, shutdown);
    },
  };
}

/**
 * The health/metrics server, started with its start-up gate closed: ready only when RabbitMQ is
 * healthy with its consumers alive, Redis answers PING, and Redis is not refusing writes.
 */
async function startAdminServer(parts: {
  config: RuntimeConfig;
  registry: Registry;
  logger: Logger;
  amqp: AmqpClient;
  redis: RedisClient;
  redisWrites: RedisWriteRefusalWatch;
}): Promise<AdminServer> {
  const { config, amqp, redis, redisWrites } = parts;
  const admin = new AdminServer({
    host: config.LIFEGUARD_HTTP_HOST,
    port: config.LIFEGUARD_HTTP_PORT,
    registry: parts.registry,
    logger: parts.logger,
    startupGate: true,
    readiness: [
      { name: 'rabbitmq', check: () => amqp.isHealthy && amqp.consumersAlive },
      { name: 'redis', check: async () => (await redis.ping()) === 'PONG' },
      { name: 'redis-writes', check: () => !redisWrites.refusingWrites },
    ],
  });
  await admin.start();
  return admin;
}

/**
 * Redis refused a reconnect (the database index, the password): the connection is closed for good,
 * so the worker stops with exit status 78 (EXIT_CONFIG) instead of running on without Redis.
 * @returns the client
 */
function shutDownWhenRefused(client: RedisClient, shutdown: GracefulShutdown): RedisClient {
  return client.once(REDIS_REFUSED_EVENT, (error: BrokerRefusedError) => {
    process.stderr.write(`${error.message}\n`);
    void shutdown.shutdown(error.message, EXIT_CONFIG);
  });
}

/**
 * Redis, then RabbitMQ with the events topology declared; what was connected is closed again when a
 * later step fails.
 * @throws BrokerUnreachableError or BrokerRefusedError (from the connects), or the declare's error
 */
async function connectBrokers(parts: {
  service: string;
  config: RuntimeConfig;
  logger: Logger;
  registry: Registry;
  redisSettings: RedisSettings;
  amqpTls: ReturnType<typeof readTlsFiles>;
  connectionName: (role: string) => string;
}): Promise<{ redis: RedisClient; amqp: AmqpClient }> {
  const { config, logger, redisSettings, amqpTls, connectionName } = parts;
  const redis = await connectRedis(redisSettings, 'default', connectionName('default'), logger);
  let amqp: AmqpClient;
  try {
    amqp = await AmqpClient.connect({
      url: config.LIFEGUARD_AMQP_URL,
      ...(amqpTls ? { tls: amqpTls } : {}),
      connectionName: connectionName('amqp'),
      service: parts.service,
      logger,
      metrics: createAmqpMetrics(parts.registry),
    });
  } catch (error) {
    redis.disconnect();
    throw error;
  }
  try {
    await amqp.declare(declareEventsTopology);
  } catch (error) {
    await amqp.close();
    redis.disconnect();
    throw error;
  }
  return { redis, amqp };
}

/**
 * The end of start-up: registers the process in the worker registry, adds the last shutdown steps
 * (leave the registry, close RabbitMQ, close Redis, stop the health server), installs the signal
 * handling and marks the process started (`/readyz` then answers by the readiness checks).
 */
function finishStartup(
  context: ServiceContext,
  version: string | undefined,
  redisConnections: ReadonlyArray<RedisClient>,
): void {
  const { config, logger, amqp, admin, shutdown, workers } = context;
  workers
    .start({
      service: context.service,
      instance: config.LIFEGUARD_INSTANCE_NAME,
      pid: process.pid,
      host: hostname(),
      httpHost: config.LIFEGUARD_HTTP_HOST,
      httpPort: admin.port,
      version: version ?? RUNTIME_VERSION,
    })
    .catch((error: unknown) => logger.warn({ err: error }, 'could not register in the worker registry'));
  // Both bounded: with Redis refusing (a fatal error is why the process stops) a command can wait
  // for ever, and the registry record expires by itself (its time to live) anyway.
  shutdown.add('leave the worker registry', () =>
    withTimeout('leaving the worker registry', workers.stop(), REDIS_SHUTDOWN_STEP_MILLISECONDS),
  );
  shutdown.add('close RabbitMQ', () => amqp.close());
  shutdown.add('close Redis', async () => {
    await Promise.all(
      redisConnections.map((client) => closeRedisClient(client, REDIS_SHUTDOWN_STEP_MILLISECONDS)),
    );
  });
  shutdown.add('stop health server', () => admin.stop());
  shutdown.install();
  admin.markStarted();
  logger.info(`${context.service} started`);
}

/** Process exit status for invalid configuration (sysexits EX_CONFIG). */
export const EXIT_CONFIG = 78;
/** Process exit status when a broker cannot be reached (sysexits EX_UNAVAILABLE). */
export const EXIT_UNAVAILABLE = 69;

/**
 * Runs a worker's `main`, turning start-up failures into one clear line on standard error and a
 * distinct exit status: ConfigError → 78 (BrokerRefusedError too: a broker refused the login, the
 * vhost or the database of its URL), BrokerUnreachableError → 69, anything else → 1.
 */
export function runMain(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(EXIT_CONFIG);
    }
    if (error instanceof BrokerUnreachableError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(EXIT_UNAVAILABLE);
    }
    process.stderr.write(
      `fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
}
