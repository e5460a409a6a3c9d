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
