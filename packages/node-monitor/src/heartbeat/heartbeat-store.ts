import { shortHostname } from '@lifeguard/instance-ha';
import { redisKey } from '@lifeguard/runtime';
import type { Redis } from 'ioredis';

// KEYS[1] hash host → epoch ms; ARGV[1] host, ARGV[2] time. Keeps the latest.
const RECORD_LATEST = `
local current = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '-1')
if tonumber(ARGV[2]) > current then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
return 1
`;

/**
 * The last heartbeat per host (short name) in Redis, so the leading monitor sees heartbeats that any
 * replica received. Key `<prefix>:node-monitor:heartbeat:last` (hash of host → epoch milliseconds).
 */
export class HeartbeatStore {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
  ) {}

  private get key(): string {
    return redisKey(this.keyPrefix, 'node-monitor', 'heartbeat', 'last');
  }

  async record(host: string, at: Date = new Date()): Promise<void> {
    await this.redis.eval(RECORD_LATEST, 1, this.key, shortHostname(host), String(at.getTime()));
  }

  async all(): Promise<Map<string, Date>> {
    const entries = await this.redis.hgetall(this.key);
    return new Map(Object.entries(entries).map(([host, value]) => [host, new Date(Number(value))]));
  }

  /** Drops entries older than `olderThanSeconds` (InstanceHA: 600 s). @returns how many */
  async prune(olderThanSeconds: number, now: Date = new Date()): Promise<number> {
    const cutoff = now.getTime() - olderThanSeconds * 1000;
    const stale = [...(await this.all())].filter(([, at]) => at.getTime() < cutoff).map(([host]) => host);
    return stale.length === 0 ? 0 : this.redis.hdel(this.key, ...stale);
  }
}
