import { defineRedisScripts, type RedisClient, type RedisScript, runScript } from '@lifeguard/runtime';
import { shortHostname } from '../services/short-hostname.ts';

// KEYS[1] hash host → epoch ms; ARGV[1] host, ARGV[2] time. Keeps the latest time only.
const RECORD_LATEST: RedisScript = {
  command: 'instanceHaRecordLatestHostTime',
  lua: `
local current = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '-1')
if tonumber(ARGV[2]) > current then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
return 1
`,
};

/**
 * One Redis hash of host → epoch milliseconds that keeps each host's latest time (a fence_kdump
 * packet, a heartbeat), shared by every process that reads or writes it. Hosts are keyed by short
 * hostname; an older time than the recorded one is ignored (one atomic script).
 */
export class LatestHostTimes {
  constructor(
    private readonly redis: RedisClient,
    /** The hash's full Redis key. */
    private readonly key: string,
  ) {
    defineRedisScripts(redis, [RECORD_LATEST]);
  }

  /** Records `at` for `host` unless a later time is already recorded. */
  async record(host: string, at: Date): Promise<void> {
    await runScript(this.redis, RECORD_LATEST, [this.key], [shortHostname(host), String(at.getTime())]);
  }

  /** The latest time of `host`, or null. */
  async get(host: string): Promise<Date | null> {
    const value = await this.redis.hget(this.key, shortHostname(host));
    return value === null ? null : new Date(Number(value));
  }

  /** Every host's latest time, by short hostname. */
  async all(): Promise<Map<string, Date>> {
    const entries = await this.redis.hgetall(this.key);
    return new Map(Object.entries(entries).map(([host, value]) => [host, new Date(Number(value))]));
  }

  /** Forgets the time of `host`. */
  async forget(host: string): Promise<void> {
    await this.redis.hdel(this.key, shortHostname(host));
  }

  /**
   * Drops the times older than `olderThanSeconds` before `now`.
   * @returns how many were dropped
   */
  async prune(olderThanSeconds: number, now: Date): Promise<number> {
    const cutoff = now.getTime() - olderThanSeconds * 1000;
    const stale = [...(await this.all())].filter(([, at]) => at.getTime() < cutoff).map(([host]) => host);
    return stale.length === 0 ? 0 : this.redis.hdel(this.key, ...stale);
  }
}
