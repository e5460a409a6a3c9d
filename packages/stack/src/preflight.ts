import { createServer } from 'node:net';
import { QUEUES } from '@lifeguard/contracts';
import {
  amqpConnectFailure,
  BROKER_START_HINTS,
  BrokerRefusedError,
  BrokerUnreachableError,
  brokerStartCommand,
  ConfigError,
  connectRedis,
  createLogger,
  parseAmqpUrlList,
  type RedisClient,
  type RedisSettings,
  redactUrl,
  redisSettingsFrom,
  scanKeys,
} from '@lifeguard/runtime';
import amqp from 'amqplib';
import {
  BrokerNotReachableError,
  ForeignStateError,
  StackConfigurationError,
  StateInUseError,
  VhostInUseError,
} from './errors.ts';

/** The stack needs both brokers: Compose starts them together. */
const DOCKER_HINT = `docker compose up -d ${BROKER_START_HINTS.RabbitMQ.composeService} ${BROKER_START_HINTS.Redis.composeService}`;

function causeText(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return causeText(error.errors[0]);
  if (error instanceof Error) return (error.message || error.name).replace(/\.+$/, '');
  return String(error);
}

function unreachable(broker: 'RabbitMQ' | 'Redis', url: string, error: unknown) {
  const address = redactUrl(url);
  return {
    broker,
    address,
    message:
      `${broker} is not reachable at ${address} (${causeText(error)}).\n` +
      `  Start it on this machine:  ${brokerStartCommand(broker)}\n` +
      `  or with Docker, in this checkout:  ${DOCKER_HINT}\n` +
      `  or point ${BROKER_START_HINTS[broker].urlVariable} at a running ${broker}.`,
  };
}

const silent = createLogger({ service: 'lifeguard-stack', level: 'silent' });

/**
 * Opens an AMQP connection to the first node of the address list (LIFEGUARD_AMQP_URL, see
 * parseAmqpUrlList) that accepts one, trying them in turn as the workers do.
 * @throws BrokerRefusedError when RabbitMQ refuses the login or the vhost; else the last node's error
 */
async function connectFirstNode(
  url: string,
  timeoutMilliseconds: number,
): Promise<Awaited<ReturnType<typeof amqp.connect>>> {
  let lastError: unknown = new Error('no address given');
  for (const address of parseAmqpUrlList(url)) {
    try {
      return await amqp.connect(address, {
        timeout: timeoutMilliseconds,
        clientProperties: { connection_name: 'lifeguard-stack:preflight' },
      });
    } catch (error) {
      const failure = await amqpConnectFailure(address, error, timeoutMilliseconds);
      if (failure instanceof BrokerRefusedError) throw failure;
      lastError = error;
    }
  }
  throw lastError;
}

/**
 * Opens and closes one AMQP connection (login and vhost included).
 * @throws BrokerRefusedError when RabbitMQ refuses the login or the vhost; else amqplib's error
 */
async function checkRabbitMq(url: string, timeoutMilliseconds: number): Promise<void> {
  const connection = await connectFirstNode(url, timeoutMilliseconds);
  await connection.close();
}

/**
 * The stack's Redis: its URL alone (one server), or the URL with the variables that name the
 * deployment's Sentinels or Redis Cluster nodes (LIFEGUARD_REDIS_SENTINELS,
 * LIFEGUARD_REDIS_SENTINEL_NAME, LIFEGUARD_REDIS_CLUSTER_NODES), as the workers get them.
 */
export type StackRedis =
  | string
  | { readonly url: string; readonly topology: Readonly<Record<string, string>>; readonly keyPrefix: string };

/** The connection settings of a StackRedis (the key prefix only matters to a cluster's hash-tag check). */
function stackRedisSettings(redis: StackRedis): RedisSettings {
  if (typeof redis === 'string') return { url: redis, keyPrefix: '' };
  return redisSettingsFrom(
    {
      LIFEGUARD_REDIS_URL: redis.url,
      LIFEGUARD_REDIS_SENTINELS: redis.topology.LIFEGUARD_REDIS_SENTINELS,
      LIFEGUARD_REDIS_SENTINEL_NAME: redis.topology.LIFEGUARD_REDIS_SENTINEL_NAME ?? 'mymaster',
      LIFEGUARD_REDIS_CLUSTER_NODES: redis.topology.LIFEGUARD_REDIS_CLUSTER_NODES,
      LIFEGUARD_REDIS_KEY_PREFIX: redis.keyPrefix,
    },
    undefined,
  );
}

/** The URL of a StackRedis, for messages. */
function stackRedisUrl(redis: StackRedis): string {
  return typeof redis === 'string' ? redis : redis.url;
}

/**
 * Opens a Redis connection as the workers do (the database of the URL selected), then disconnects.
 * @throws BrokerRefusedError (database index, password); else the cause of the failure
 */
async function checkRedis(redis: StackRedis, timeoutMilliseconds: number): Promise<void> {
  let client: RedisClient;
  try {
    client = await connectRedis(
      stackRedisSettings(redis),
      'producer',
      'lifeguard-stack:preflight',
      silent,
      timeoutMilliseconds,
    );
  } catch (error) {
    throw error instanceof BrokerUnreachableError ? error.cause : error;
  }
  client.disconnect();
}

/**
 * Opens a Redis connection for the stack's own use, the database of the URL selected (a refused
 * SELECT is fatal, as in the workers).
 * @throws BrokerUnreachableError, BrokerRefusedError
 */
export function connectStackRedis(redis: StackRedis, connectionName: string): Promise<RedisClient> {
  return connectRedis(stackRedisSettings(redis), 'default', connectionName, silent, 5000, {
    maxRetriesPerRequest: 1,
  });
}

/**
 * Checks that RabbitMQ and Redis answer and accept what their URLs ask for, both at once.
 * @throws BrokerNotReachableError when a broker did not answer, with one message per broker that
 *   failed: its address (password masked), the cause, and how to start it (local service, `docker
 *   compose up -d rabbitmq redis`, or the variable to point elsewhere); a broker that answered but
 *   refused is described in it too
 * @throws BrokerRefusedError (a ConfigError) when every failing broker answered but refused the
 *   login, vhost or database of its URL (one refusal), or ConfigError naming both (two)
 */
export async function checkBrokers(
  amqpUrl: string,
  redisTarget: StackRedis,
  timeoutMilliseconds = 5000,
): Promise<void> {
  const redisUrl = stackRedisUrl(redisTarget);
  const [rabbit, redis] = await Promise.allSettled([
    checkRabbitMq(amqpUrl, timeoutMilliseconds),
    checkRedis(redisTarget, timeoutMilliseconds),
  ]);
  const problems = [];
  const refusals: BrokerRefusedError[] = [];
  for (const [broker, url, result] of [
    ['RabbitMQ', amqpUrl, rabbit],
    ['Redis', redisUrl, redis],
  ] as const) {
    if (result.status === 'fulfilled') continue;
    if (result.reason instanceof BrokerRefusedError) refusals.push(result.reason);
    else if (result.reason instanceof ConfigError) throw result.reason;
    else problems.push(unreachable(broker, url, result.reason));
  }
  if (problems.length > 0) {
    for (const { broker, address, message } of refusals) problems.push({ broker, address, message });
    throw new BrokerNotReachableError(problems);
  }
  if (refusals.length === 1) throw refusals[0];
  if (refusals.length > 1) {
    throw new ConfigError(
      refusals.flatMap((refusal) => refusal.problems),
      refusals.map((refusal) => refusal.message).join('\n\n'),
    );
  }
}

/** Resolves true when nothing listens on host:port (by binding it for a moment). */
export function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A port nothing listens on, chosen by the system. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port: 0, host, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * @throws StackConfigurationError naming every port already in use and who wanted it
 */
export async function checkPortsFree(
  wanted: ReadonlyArray<{ owner: string; port: number; host?: string }>,
): Promise<void> {
  const busy: string[] = [];
  for (const { owner, port, host } of wanted) {
    if (port === 0) continue;
    if (!(await portIsFree(port, host))) busy.push(`${port} (${owner})`);
  }
  if (busy.length > 0) {
    throw new StackConfigurationError(
      `port${busy.length > 1 ? 's' : ''} already in use: ${busy.join(', ')}. Is another lifeguard stack ` +
        'running? Stop it, or start this one with other ports (--http-port-base, --cloud-sim-port, ' +
        '--redfish-port; see npm start -- --help).',
    );
  }
}

/** Queues whose consumers are lifeguard workers: someone consuming them is a running lifeguard. */
export const WORKER_INTAKE_QUEUES: ReadonlyArray<string> = [
  QUEUES.hostDown,
  QUEUES.hostRecovery,
  QUEUES.provisioningComplete,
  QUEUES.provisioningCommands,
];

/**
 * Checks that no lifeguard worker consumes the intake queues of this vhost: a simulated stack there
 * would take (and dead-letter) another deployment's events, and two stacks would split each other's.
 * @throws VhostInUseError naming the queues and their consumer counts
 */
export async function checkVhostUnused(amqpUrl: string, timeoutMilliseconds = 5000): Promise<void> {
  const connection = await connectFirstNode(amqpUrl, timeoutMilliseconds);
  const busy: Array<{ queue: string; consumers: number }> = [];
  try {
    for (const queue of WORKER_INTAKE_QUEUES) {
      // A passive check closes the channel when the queue does not exist: one channel per queue.
      const channel = await connection.createChannel();
      channel.on('error', () => undefined);
      try {
        const { consumerCount } = await channel.checkQueue(queue);
        if (consumerCount > 0) busy.push({ queue, consumers: consumerCount });
        await channel.close();
      } catch {
        // not declared yet: nobody consumes it
      }
    }
  } finally {
    await connection.close().catch(() => undefined);
  }
  if (busy.length > 0) throw new VhostInUseError(redactUrl(amqpUrl), busy);
}

/**
 * `<service> <instance>` of each process registered under the prefix, from the keys found there (the
 * worker registry's records, which live 15 s after their process's last refresh), sorted.
 */
function registeredProcesses(keys: ReadonlyArray<string>, keyPrefix: string): string[] {
  const prefix = `${keyPrefix}:workers:`;
  return keys
    .filter((key) => key.startsWith(prefix))
    .map((key) => key.slice(prefix.length).replace(':', ' '))
    .sort();
}

/** The Redis key (under the prefix) that marks keys as written by a simulated stack. */
export const SIMULATED_STATE_MARKER = 'stack:simulated';

/**
 * Resets the simulated stack's Redis state: the simulated cloud is new on every start, so incidents,
 * BullMQ jobs and leases of an earlier run would name hosts and servers that no longer exist. Only
 * keys under `<prefix>:` are touched, and only when they were written by a simulated stack (the marker
 * key) or hold no state (none, or only BullMQ's queue metadata, which merely reading a queue's depth
 * writes, as `lifeguard status` does); then the marker is set again. At stop (`when: 'stop'`) the
 * keys and the marker are removed, so the prefix is not left marked for a later deployment.
 * @throws ForeignStateError when keys under the prefix exist without the marker
 * @throws StateInUseError at start when lifeguard processes are registered under the prefix (a
 *   running stack's state, which a reset would wipe)
 * @returns how many keys were deleted
 */
export async function resetSimulatedState(
  redis: StackRedis,
  keyPrefix: string,
  /** `start`: reset and set the marker; `stop`: remove everything, marker included (only when marked). */
  when: 'start' | 'stop' = 'start',
): Promise<number> {
  const redisUrl = stackRedisUrl(redis);
  const client = await connectStackRedis(redis, 'lifeguard-stack:reset');
  try {
    const marker = `${keyPrefix}:${SIMULATED_STATE_MARKER}`;
    const pattern = `${keyPrefix.replace(/[*?[\]\\]/g, '\\$&')}:*`;
    const marked = (await client.exists(marker)) === 1;
    if (when === 'stop' && !marked) return 0;
    const queueMetadata = `${keyPrefix}:bull:`;
    const keys: string[] = [];
    const foreign: string[] = [];
    for (const key of await scanKeys(client, pattern)) {
      const stateless = key.startsWith(queueMetadata) && /^[^:]+:meta$/.test(key.slice(queueMetadata.length));
      if (!marked && !stateless) foreign.push(key);
      keys.push(key);
    }
    if (foreign.length > 0) throw new ForeignStateError(keyPrefix, redactUrl(redisUrl), foreign.sort());
    if (when === 'start') {
      const running = registeredProcesses(keys, keyPrefix);
      if (running.length > 0) throw new StateInUseError(keyPrefix, redactUrl(redisUrl), running);
    }
    let deleted = 0;
    for (let start = 0; start < keys.length; start += 1000) {
      deleted += await client.unlink(...keys.slice(start, start + 1000));
    }
    if (when === 'start') await client.set(marker, new Date().toISOString());
    return deleted;
  } finally {
    client.disconnect();
  }
}
