import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { exponentialBackoff } from '../backoff.ts';
import { redactUrl } from '../config/secret-keys.ts';
import type { TlsFiles } from '../config/tls-files.ts';
import { type BrokerRefusedError, BrokerUnreachableError, ConfigError } from '../errors.ts';
import {
  REDIS_DATABASE_PROBLEM,
  REDIS_REFUSED_EVENT,
  redisDatabaseIndex,
  redisRefusal,
} from './redis-refusal.ts';

export interface RedisSettings {
  /** `redis://[[user]:password@]host:port/db` (db a whole number from 0), or `rediss://` for TLS. */
  url: string;
  /** Sentinels as `host:port` pairs; when given, `url` supplies only password, db and TLS. */
  sentinels?: ReadonlyArray<{ host: string; port: number }>;
  sentinelName?: string;
  /** Prefix of every key lifeguard writes (see `redisKey`). */
  keyPrefix: string;
  /** CA, client certificate and key for a `rediss://` URL (LIFEGUARD_REDIS_TLS_CA_FILE, LIFEGUARD_REDIS_TLS_CERT_FILE, LIFEGUARD_REDIS_TLS_KEY_FILE); default Node's CAs. */
  tls?: TlsFiles;
}

/** What the connection is for: BullMQ workers need blocking commands that never give up. */
export type RedisRole = 'worker' | 'producer' | 'default';

/** Parses LIFEGUARD_REDIS_SENTINELS (`host:port,host:port`). */
export function parseSentinels(list: string | undefined): Array<{ host: string; port: number }> | undefined {
  if (!list) return undefined;
  return list.split(',').map((entry) => {
    const index = entry.lastIndexOf(':');
    return { host: entry.slice(0, index), port: Number(entry.slice(index + 1)) };
  });
}

/**
 * ioredis options for a role: `worker` sets `maxRetriesPerRequest: null` (BullMQ workers must
 * never fail a blocking command); `producer` fails fast (`enableOfflineQueue: false`) so a request
 * path notices Redis being down instead of queueing forever.
 * @throws ConfigError naming LIFEGUARD_REDIS_URL when its database part is not a whole number from 0
 */
export function redisOptions(settings: RedisSettings, role: RedisRole, connectionName: string): RedisOptions {
  const url = new URL(settings.url);
  const db = redisDatabaseIndex(url);
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
  const common: RedisOptions = {
    connectionName,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    username: url.username ? decodeURIComponent(url.username) : undefined,
    db,
    ...(url.protocol === 'rediss:' ? { tls: { ...settings.tls } } : {}),
    maxRetriesPerRequest: role === 'worker' ? null : 3,
    enableOfflineQueue: role !== 'producer',
    retryStrategy: (attempt) => exponentialBackoff(200, attempt, 5000),
  };
  if (settings.sentinels?.length) {
    return {
      ...common,
      sentinels: [...settings.sentinels],
      name: settings.sentinelName ?? 'mymaster',
      ...(url.protocol === 'rediss:' ? { enableTLSForSentinelMode: true } : {}),
    };
  }
  return { ...common, host: url.hostname || '127.0.0.1', port: Number(url.port || 6379) };
}

/** Where a connection goes, for messages: the URL with its password masked, or the sentinels. */
function redisAddress(settings: RedisSettings): string {
  return settings.sentinels?.length
    ? `sentinels ${settings.sentinels.map((s) => `${s.host}:${s.port}`).join(',')} (master ${settings.sentinelName ?? 'mymaster'})`
    : redactUrl(settings.url);
}

const START_HINT =
  'Start it (as root: redis-server --daemonize yes) or run `docker compose up -d redis`, or point LIFEGUARD_REDIS_URL at it.';

/**
 * Opens a Redis connection and waits until it answers PING on the configured database.
 *
 * A refusal is fatal, never worked around: ioredis reports a failed `SELECT` (a database index
 * this Redis does not have) as an error event and carries on with database 0, and retries a refused
 * `AUTH` forever. At start-up either one rejects with BrokerRefusedError; after start-up (a
 * reconnect) the client disconnects for good, logs the error at `fatal` and emits
 * REDIS_REFUSED_EVENT with it, for its owner to stop the process.
 * @param timeoutMilliseconds how long to try before giving up (default 5000)
 * @param extraOptions more ioredis options, e.g. `{ enableAutoPipelining: true }` for a connection
 *   that sends many concurrent commands (they go out in one write per event-loop tick)
 * @throws ConfigError for a URL whose database part is not a whole number from 0
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
  extraOptions: Partial<RedisOptions> = {},
): Promise<Redis> {
  const client = new Redis({
    ...redisOptions(settings, role, connectionName),
    ...extraOptions,
    lazyConnect: true,
  });
  const address = redisAddress(settings);
  let started = false;
  let refusal: BrokerRefusedError | null = null;
  /** ioredis rejects connect() with "Connection is closed."; the reason came as an error event. */
  let lastError: unknown = null;
  client.on('error', (error: Error) => {
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
  });
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
