import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { redactUrl } from '../config/secret-keys.ts';
import { BrokerUnreachableError } from '../errors.ts';

export interface RedisSettings {
  /** `redis://[:password@]host:port/db`, or `rediss://` for TLS. */
  url: string;
  /** Sentinels as `host:port` pairs; when given, `url` supplies only password, db and TLS. */
  sentinels?: ReadonlyArray<{ host: string; port: number }>;
  sentinelName?: string;
  /** Prefix of every key lifeguard writes (see `redisKey`). */
  keyPrefix: string;
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
 */
export function redisOptions(settings: RedisSettings, role: RedisRole, connectionName: string): RedisOptions {
  const url = new URL(settings.url);
  const common: RedisOptions = {
    connectionName,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    username: url.username ? decodeURIComponent(url.username) : undefined,
    db: url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0,
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
    maxRetriesPerRequest: role === 'worker' ? null : 3,
    enableOfflineQueue: role !== 'producer',
    retryStrategy: (attempt) => Math.min(200 * 2 ** Math.min(attempt, 6), 5000),
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

/**
 * Opens a Redis connection and waits until it answers PING.
 * @param timeoutMilliseconds how long to try before giving up (default 5000)
 * @param extraOptions more ioredis options, e.g. `{ enableAutoPipelining: true }` for a connection
 *   that sends many concurrent commands (they go out in one write per event-loop tick)
 * @throws BrokerUnreachableError naming the address (password masked) and how to start Redis
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
  client.on('error', (error: Error) =>
    logger.debug({ err: error, connectionName }, 'Redis connection error'),
  );
  const address = settings.sentinels?.length
    ? `sentinels ${settings.sentinels.map((s) => `${s.host}:${s.port}`).join(',')}`
    : redactUrl(settings.url);
  try {
    await Promise.race([
      client.connect().then(() => client.ping()),
      new Promise((_, reject) =>
        setTimeout(
          () => reject(new Error(`no answer within ${timeoutMilliseconds} ms`)),
          timeoutMilliseconds,
        ),
      ),
    ]);
  } catch (error) {
    client.disconnect();
    throw new BrokerUnreachableError(
      'Redis',
      address,
      'Start it (as root: redis-server --daemonize yes) or run `docker compose up -d redis`, or point LIFEGUARD_REDIS_URL at it.',
      error,
    );
  }
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
