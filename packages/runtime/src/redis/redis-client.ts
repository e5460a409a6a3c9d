import type { Cluster, Redis } from 'ioredis';

/**
 * A connection to a deployment's Redis: one server, reached directly or through Sentinel (ioredis
 * `Redis`), or a Redis Cluster (ioredis `Cluster`). Both take the same commands; on a cluster every
 * command's keys must hash to one slot, which the hash tag of the key prefix guarantees
 * (docs/operations.md#53-redis).
 */
export type RedisClient = Redis | Cluster;

/** Whether `client` is a Redis Cluster client (ioredis sets `isCluster` on both kinds). */
export function isRedisCluster(client: RedisClient): client is Cluster {
  return client.isCluster;
}

/**
 * The hash tag of a key prefix, as Redis Cluster finds it in a key: the text between the first `{`
 * and the first `}` after it, when that text is not empty (Redis Cluster specification, "Hash tags").
 * A prefix with a tag puts every key `<prefix>:...` in the slot of the tag; `{lifeguard-prod}` → `lifeguard-prod`.
 * @returns null when the prefix holds no complete, non-empty tag (`lifeguard`, `a{}b`, `a{b`)
 */
export function keyPrefixHashTag(prefix: string): string | null {
  const open = prefix.indexOf('{');
  if (open < 0) return null;
  const close = prefix.indexOf('}', open + 1);
  if (close < 0 || close === open + 1) return null;
  return prefix.slice(open + 1, close);
}

/**
 * Every key matching `pattern` (SCAN with MATCH, never KEYS). On a cluster SCAN covers one node
 * only, so every master is scanned in turn.
 * @param count the COUNT hint per SCAN call
 * @throws the connection's error (a node that cannot be reached)
 */
export async function scanKeys(client: RedisClient, pattern: string, count = 1000): Promise<string[]> {
  const nodes = isRedisCluster(client) ? client.nodes('master') : [client];
  const keys = new Set<string>();
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, batch] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', count);
      cursor = next;
      for (const key of batch) keys.add(key);
    } while (cursor !== '0');
  }
  return [...keys];
}

/** What the configuration says about a cluster URL whose database is not 0. */
export const REDIS_CLUSTER_DATABASE_PROBLEM =
  'a Redis Cluster has only database 0: end the URL with /0 (or no path) when LIFEGUARD_REDIS_CLUSTER_NODES is set';

/** What the configuration says about a key prefix without a hash tag on a cluster. */
export const REDIS_CLUSTER_PREFIX_PROBLEM =
  "must hold a {hash tag} when LIFEGUARD_REDIS_CLUSTER_NODES is set, e.g. {lifeguard}: every key of a deployment, BullMQ's included, must hash to one slot so that its scripts and transactions stay atomic";

/** What ioredis rejects a command with once its connection is closed for good. */
const CONNECTION_CLOSED = 'Connection is closed.';

/**
 * Closes `client` for good: QUIT when it is connected (bounded by `quitMilliseconds`, then a hard
 * disconnect), a disconnect otherwise; never throws. When `resolves`, the client's status is `end`
 * and no command it still held waits any longer.
 *
 * ioredis leaves a client that is disconnected between two reconnect attempts in `reconnecting`
 * for good (redis/ioredis#1247): the attempt's timer is cancelled and there is no socket to close,
 * so no `close` event ever ends it, and the commands queued while it was away wait for ever. That
 * client is ended here the way ioredis ends one that never connected: status `end`, its queued
 * commands rejected with "Connection is closed.".
 */
export async function closeRedisClient(client: RedisClient, quitMilliseconds = 2000): Promise<void> {
  if (client.status === 'end') return;
  if (client.status === 'ready') {
    const ended = endedWithin(client, quitMilliseconds);
    client.quit().catch(() => undefined);
    if (await ended) return;
  }
  const ended = endedWithin(client, quitMilliseconds);
  client.disconnect();
  endStrandedClient(client);
  await ended;
}

/** Whether `client` reaches status `end` within `milliseconds`. */
function endedWithin(client: RedisClient, milliseconds: number): Promise<boolean> {
  if (client.status === 'end') return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      client.off('end', onEnd);
      resolve(false);
    }, milliseconds);
    const onEnd = () => {
      clearTimeout(timer);
      resolve(true);
    };
    client.once('end', onEnd);
  });
}

/** Ends a standalone client that `disconnect()` stranded in `reconnecting` (see closeRedisClient). */
function endStrandedClient(client: RedisClient): void {
  if (isRedisCluster(client) || client.status !== 'reconnecting') return;
  const internals = client as unknown as {
    setStatus?: (status: 'end') => void;
    flushQueue?: (error: Error) => void;
  };
  internals.setStatus?.('end');
  internals.flushQueue?.(new Error(CONNECTION_CLOSED));
}
