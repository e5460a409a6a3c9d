import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { exponentialBackoff } from '../backoff.ts';
import { brokerStartHint } from '../broker-start-hints.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import { redactUrl } from '../config/secret-keys.ts';
import type { TlsFiles } from '../config/tls-files.ts';
import { type BrokerRefusedError, BrokerUnreachableError, ConfigError } from '../errors.ts';
import {
  keyPrefixHashTag,
  REDIS_CLUSTER_DATABASE_PROBLEM,
  REDIS_CLUSTER_PREFIX_PROBLEM,
  type RedisClient,
} from './redis-client.ts';
import {
  REDIS_DATABASE_PROBLEM,
  REDIS_REFUSED_EVENT,
  redisDatabaseIndex,
  redisRefusal,
} from './redis-refusal.ts';

/** A Redis server's address (a Sentinel, a cluster node). */
export interface RedisNodeAddress {
  host: string;
  port: number;
}

export interface RedisSettings {
  /** `redis://[[user]:password@]host:port/db` (db a whole number from 0), or `rediss://` for TLS. */
  url: string;
  /** Sentinels as `host:port` pairs; when given, `url` supplies only password, db and TLS. */
  sentinels?: ReadonlyArray<RedisNodeAddress>;
  sentinelName?: string;
  /**
   * Nodes of a Redis Cluster to start from (LIFEGUARD_REDIS_CLUSTER_NODES; the client learns the
   * others from them); when given, `url` supplies only user, password and TLS, its database must be 0,
   * and `keyPrefix` must hold a hash tag.
   */
  clusterNodes?: ReadonlyArray<RedisNodeAddress>;
  /** Prefix of every key lifeguard writes (see `redisKey`). */
  keyPrefix: string;
  /** CA, client certificate and key for a `rediss://` URL (LIFEGUARD_REDIS_TLS_CA_FILE, LIFEGUARD_REDIS_TLS_CERT_FILE, LIFEGUARD_REDIS_TLS_KEY_FILE); default Node's CAs. */
  tls?: TlsFiles;
}

/** What the connection is for: BullMQ workers need blocking commands that never give up. */
export type RedisRole = 'worker' | 'producer' | 'default';

/** Parses a `host:port,host:port` list (LIFEGUARD_REDIS_SENTINELS, LIFEGUARD_REDIS_CLUSTER_NODES). */
export function parseRedisNodes(list: string | undefined): RedisNodeAddress[] | undefined {
  if (!list) return undefined;
  return list.split(',').map((entry) => {
    const index = entry.lastIndexOf(':');
    return { host: entry.slice(0, index), port: Number(entry.slice(index + 1)) };
  });
}

/** Parses LIFEGUARD_REDIS_SENTINELS (`host:port,host:port`). */
export const parseSentinels = parseRedisNodes;

/**
 * ioredis options for a role: `worker` sets `maxRetriesPerRequest: null` (BullMQ workers must
 * never fail a blocking command); `producer` fails fast (`enableOfflineQueue: false`) so a request
 * path notices Redis being down instead of queueing forever.
 * @throws ConfigError naming LIFEGUARD_REDIS_URL when its database part is not a whole number from 0
 */
export function redisOptions(settings: RedisSettings, role: RedisRole, connectionName: string): RedisOptions {
  const url = new URL(settings.url);
  const common: RedisOptions = {
    ...serverOptions(settings, role, connectionName),
    db: databaseOf(settings),
    enableOfflineQueue: role !== 'producer',
    retryStrategy: (attempt) => exponentialBackoff(200, attempt, 5000),
  };
  if (settings.sentinels?.length) {
    return {
      ...common,
      sentinels: [...settings.sentinels],
      name: settings.sentinelName ?? 'mymaster',
      ...(url.protocol === 'rediss:' ? { enableTLSForSentinelMode: true } : {}),
      // A former master that is back as a replica answers writes with READONLY: find the master again
      // through the Sentinels and send the command there.
      reconnectOnError: (error) => (error.message.startsWith('READONLY') ? 2 : false),
    };
  }
  return { ...common, host: url.hostname || '127.0.0.1', port: Number(url.port || 6379) };
}

/** The options every server connection shares: name, credentials, TLS and how hard a command retries. */
function serverOptions(
  settings: RedisSettings,
  role: RedisRole,
  connectionName: string,
): Pick<RedisOptions, 'connectionName' | 'password' | 'username' | 'tls' | 'maxRetriesPerRequest'> {
  const url = new URL(settings.url);
  return {
    connectionName,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    username: url.username ? decodeURIComponent(url.username) : undefined,
    ...(url.protocol === 'rediss:' ? { tls: { ...settings.tls } } : {}),
    maxRetriesPerRequest: role === 'worker' ? null : 3,
  };
}

/** The database index of the URL. @throws ConfigError naming LIFEGUARD_REDIS_URL when it is not a whole number from 0 */
function databaseOf(settings: RedisSettings): number {
  const db = redisDatabaseIndex(settings.url);
  if (db === null) {
    throw new ConfigError([
      {
        key: 'LIFEGUARD_REDIS_URL',
        source: 'RedisSettings.url',
        problem: REDIS_DATABASE_PROBLEM,
        value: JSON.stringify(redactUrl(settings.url)),
      },
    ]);
  }
  return db;
}

/**
 * How long a cluster command waits between two tries while its slot's master is failing over, in
 * milliseconds, and how many tries it gets: together about 19 s, more than a replica takes to be
 * promoted (cluster-node-timeout plus an election; docs/operations.md#53-redis).
 */
export const CLUSTER_RETRY_DELAY_MILLISECONDS = 300;
export const CLUSTER_MAX_REDIRECTIONS = 64;

/**
 * ioredis Cluster options for a role, from the same settings as a single server (`clusterNodes`
 * set): credentials and TLS of the URL for every node; `worker` commands never give up
 * (`maxRetriesPerRequest: null`, as BullMQ requires), `producer` fails fast (no offline queue). A
 * command whose node went away (a master killed) or that meets CLUSTERDOWN or TRYAGAIN is sent again
 * after CLUSTER_RETRY_DELAY_MILLISECONDS, up to CLUSTER_MAX_REDIRECTIONS times, to the slot's master
 * as the cluster then names it.
 * @throws ConfigError naming LIFEGUARD_REDIS_URL when its database is not 0 (a cluster has only
 *   database 0), or LIFEGUARD_REDIS_KEY_PREFIX when the prefix holds no hash tag
 */
export function redisClusterOptions(
  settings: RedisSettings,
  role: RedisRole,
  connectionName: string,
): ClusterOptions {
  const db = databaseOf(settings);
  if (db !== 0) {
    throw new ConfigError([
      {
        key: 'LIFEGUARD_REDIS_URL',
        source: 'RedisSettings.url',
        problem: REDIS_CLUSTER_DATABASE_PROBLEM,
        value: JSON.stringify(redactUrl(settings.url)),
      },
    ]);
  }
  if (keyPrefixHashTag(settings.keyPrefix) === null) {
    throw new ConfigError([
      {
        key: 'LIFEGUARD_REDIS_KEY_PREFIX',
        source: 'RedisSettings.keyPrefix',
        problem: REDIS_CLUSTER_PREFIX_PROBLEM,
        value: JSON.stringify(settings.keyPrefix),
      },
    ]);
  }
  return {
    redisOptions: serverOptions(settings, role, connectionName),
    enableOfflineQueue: role !== 'producer',
    // No ready check (CLUSTER INFO after the slots are read). A connect() whose ready check meets
    // cluster_state:fail (a failover not finished) reconnects by itself but never settles the promise
    // of that connect(); BullMQ's watchdog awaits exactly such a connect() when it resets a worker's
    // blocking connection, and the worker then takes no job again. Without it, a command that meets
    // CLUSTERDOWN is retried (retryDelayOnClusterDown below) like any other failover error.
    enableReadyCheck: false,
    clusterRetryStrategy: (attempt) => exponentialBackoff(200, attempt, 5000),
    retryDelayOnFailover: CLUSTER_RETRY_DELAY_MILLISECONDS,
    retryDelayOnClusterDown: CLUSTER_RETRY_DELAY_MILLISECONDS,
    retryDelayOnTryAgain: CLUSTER_RETRY_DELAY_MILLISECONDS,
    maxRedirections: CLUSTER_MAX_REDIRECTIONS,
  };
}

/** Where a connection goes, for messages: the URL with its password masked, the sentinels or the cluster nodes. */
function redisAddress(settings: RedisSettings): string {
  const list = (nodes: ReadonlyArray<RedisNodeAddress>) => nodes.map((n) => `${n.host}:${n.port}`).join(',');
  if (settings.clusterNodes?.length) return `cluster nodes ${list(settings.clusterNodes)}`;
  return settings.sentinels?.length
    ? `sentinels ${list(settings.sentinels)} (master ${settings.sentinelName ?? 'mymaster'})`
    : redactUrl(settings.url);
}

/** A client for the settings, not connected yet: a Cluster when `clusterNodes` is set, else a Redis. */
function createClient(
  settings: RedisSettings,
  role: RedisRole,
  connectionName: string,
  extraOptions: RedisExtraOptions,
): RedisClient {
  if (settings.clusterNodes?.length) {
    const options = redisClusterOptions(settings, role, connectionName);
    const { maxRetriesPerRequest, enableAutoPipelining } = extraOptions;
    return new Cluster([...settings.clusterNodes], {
      ...options,
      ...(enableAutoPipelining === undefined ? {} : { enableAutoPipelining }),
      ...(maxRetriesPerRequest === undefined
        ? {}
        : { redisOptions: { ...options.redisOptions, maxRetriesPerRequest } }),
      lazyConnect: true,
    });
  }
  return new Redis({ ...redisOptions(settings, role, connectionName), ...extraOptions, lazyConnect: true });
}

/** The ioredis options a caller of connectRedis may add; on a cluster they apply to every node. */
export type RedisExtraOptions = Pick<RedisOptions, 'enableAutoPipelining' | 'maxRetriesPerRequest'>;

const START_HINT = brokerStartHint('Redis');

/**
 * Opens a Redis connection and waits until it answers PING on the configured database: one server
 * (directly, or the master the Sentinels name) or, with `settings.clusterNodes`, a Redis Cluster (an
 * ioredis Cluster that has read the cluster's slots; see redisClusterOptions).
 *
 * A refusal is fatal, never worked around: ioredis reports a failed `SELECT` (a database index
 * this Redis does not have) as an error event and carries on with database 0, and retries a refused
 * `AUTH` forever. At start-up either one rejects with BrokerRefusedError; after start-up (a
 * reconnect) the client disconnects for good, logs the error at `fatal` and emits
 * REDIS_REFUSED_EVENT with it, for its owner to stop the process.
 * @param timeoutMilliseconds how long to try before giving up (default 5000)
 * @param extraOptions more ioredis options, e.g. `{ enableAutoPipelining: true }` for a connection
 *   that sends many concurrent commands (they go out in one write per event-loop tick)
 * @throws ConfigError for a URL whose database part is not a whole number from 0 (or not 0 on a cluster)
 * @throws BrokerRefusedError (a ConfigError naming LIFEGUARD_REDIS_URL) when Redis refuses the
 *   database index or the password, with Redis's answer
 * @throws BrokerUnreachableError naming the address (password masked), the cause
 *   (`connect ECONNREFUSED 127.0.0.1:6379`) and how to start Redis
 */
export async function connectRedis(
  settings: RedisSettings,
  role: RedisRole,
  connectionName: string,
  logger: Logger,
  timeoutMilliseconds = 5000,
  extraOptions: RedisExtraOptions = {},
): Promise<RedisClient> {
  const client = createClient(settings, role, connectionName, extraOptions);
  const address = redisAddress(settings);
  let started = false;
  let refusal: BrokerRefusedError | null = null;
  /** ioredis rejects connect() with "Connection is closed."; the reason came as an error event. */
  let lastError: unknown = null;
  const onError = (error: Error) => {
    const refused = redisRefusal(error, address, settings.url);
    if (!refused) {
      lastError = error;
      logger.debug({ err: error, connectionName }, 'Redis connection error');
      return;
    }
    // Synchronously, before ioredis's ready handler can send any queued command to database 0.
    client.disconnect();
    if (refusal) return;
    refusal = refused;
    if (started) {
      logger.fatal({ err: error, connectionName }, refused.message);
      client.emit(REDIS_REFUSED_EVENT, refused);
    }
  };
  client.on('error', onError);
  // A cluster reports a node's refusal (AUTH) as `node error`, with the node's address.
  if (settings.clusterNodes?.length) client.on('node error', (error: Error) => onError(error));
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.connect().then(() => client.ping()),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${timeoutMilliseconds} ms`)),
          timeoutMilliseconds,
        );
      }),
    ]);
  } catch (error) {
    client.disconnect();
    throw (
      refusal ??
      redisRefusal(error, address, settings.url) ??
      new BrokerUnreachableError('Redis', address, START_HINT, lastError ?? error)
    );
  } finally {
    clearTimeout(timer);
  }
  if (refusal) throw refusal;
  started = true;
  return client;
}

/** `<prefix>:<part>:<part>...`: the one way lifeguard names its Redis keys. */
export function redisKey(prefix: string, ...parts: ReadonlyArray<string>): string {
  return [prefix, ...parts].join(':');
}

/** The BullMQ `prefix` option for a deployment's key prefix (`<prefix>:bull`). */
export function bullmqPrefix(keyPrefix: string): string {
  return `${keyPrefix}:bull`;
}

/** The runtime settings that say where Redis is and under which key prefix (see redisSettingsFrom). */
export type RedisTopologyConfig = Pick<
  RuntimeConfig,
  | 'LIFEGUARD_REDIS_URL'
  | 'LIFEGUARD_REDIS_SENTINELS'
  | 'LIFEGUARD_REDIS_SENTINEL_NAME'
  | 'LIFEGUARD_REDIS_CLUSTER_NODES'
  | 'LIFEGUARD_REDIS_KEY_PREFIX'
>;

/**
 * The Redis settings of a process from its runtime configuration (LIFEGUARD_REDIS_URL, _SENTINELS,
 * _SENTINEL_NAME, _CLUSTER_NODES, _KEY_PREFIX and the TLS files), as every worker, the CLI and the
 * console read them.
 */
export function redisSettingsFrom(config: RedisTopologyConfig, tls: TlsFiles | undefined): RedisSettings {
  const clusterNodes = parseRedisNodes(config.LIFEGUARD_REDIS_CLUSTER_NODES);
  const sentinels = parseRedisNodes(config.LIFEGUARD_REDIS_SENTINELS);
  return {
    url: config.LIFEGUARD_REDIS_URL,
    ...(sentinels ? { sentinels } : {}),
    sentinelName: config.LIFEGUARD_REDIS_SENTINEL_NAME,
    ...(clusterNodes ? { clusterNodes } : {}),
    keyPrefix: config.LIFEGUARD_REDIS_KEY_PREFIX,
    ...(tls ? { tls } : {}),
  };
}
