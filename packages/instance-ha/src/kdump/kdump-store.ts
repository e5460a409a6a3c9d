import type { RedisClient } from '@lifeguard/runtime';
import { redisKey } from '@lifeguard/runtime';
import { LatestHostTimes } from '../services/latest-host-times.ts';
import { shortHostname } from '../services/short-hostname.ts';

/** Replaces the clock (field ARGV[1]) with ARGV[3] when it still holds ARGV[2] or none; returns the clock. */
const RESTART_WAIT = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current == false or current == ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  return ARGV[3]
end
return current
`;

/**
 * kdump state in Redis, so every node-monitor replica and the fencing worker see it (InstanceHA kept
 * it in memory and lost it on restart, docs/instance-ha-rules.md#kdump): the time of the last fence_kdump packet per
 * host, and when the monitor started waiting for a first packet from a failed host. Hosts are keyed
 * by short hostname. Keys: `<prefix>:instance-ha:kdump:last-packet` and `...:kdump:wait-started`
 * (hashes of host → epoch milliseconds).
 */
export class KdumpStore {
  private readonly lastPackets: LatestHostTimes;

  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {
    this.lastPackets = new LatestHostTimes(redis, this.key('last-packet'));
  }

  private key(name: string): string {
    return redisKey(this.keyPrefix, 'instance-ha', 'kdump', name);
  }

  /** Records a packet from `host` at `at` (an older time than the recorded one is ignored). */
  async recordPacket(host: string, at: Date = new Date()): Promise<void> {
    await this.lastPackets.record(host, at);
  }

  /** When the last packet from `host` arrived, or null. */
  async lastPacketAt(host: string): Promise<Date | null> {
    return this.lastPackets.get(host);
  }

  /** Every host's last packet time. */
  allLastPackets(): Promise<Map<string, Date>> {
    return this.lastPackets.all();
  }

  /** True when a packet from `host` arrived within `withinSeconds` before `now`. */
  async packetWithin(host: string, withinSeconds: number, now: Date = new Date()): Promise<boolean> {
    const last = await this.lastPacketAt(host);
    return last !== null && now.getTime() - last.getTime() <= withinSeconds * 1000;
  }

  /**
   * Starts the kdump wait clock of a failed host unless it is already running (docs/instance-ha-rules.md#kdump: "first
   * time seen down → start a wait clock").
   * @returns when the wait started (the existing start when one was running)
   */
  async startWait(host: string, at: Date = new Date()): Promise<Date> {
    const key = this.key('wait-started');
    const field = shortHostname(host);
    await this.redis.hsetnx(key, field, String(at.getTime()));
    const value = await this.redis.hget(key, field);
    return new Date(Number(value ?? at.getTime()));
  }

  /**
   * Starts the wait clock of `host` afresh in place of `stale`, a clock of an earlier failure the host
   * came back from. Compare and set: when another replica replaced or cleared it meanwhile, theirs
   * stands (a cleared clock is started).
   * @returns when the wait started (this start, or the one another replica wrote first)
   */
  async restartWait(host: string, stale: Date, at: Date = new Date()): Promise<Date> {
    const value = await this.redis.eval(
      RESTART_WAIT,
      1,
      this.key('wait-started'),
      shortHostname(host),
      String(stale.getTime()),
      String(at.getTime()),
    );
    return new Date(Number(value));
  }

  /** Every running wait clock: short hostname → when it started. */
  async allWaitStarts(): Promise<Map<string, Date>> {
    const all = await this.redis.hgetall(this.key('wait-started'));
    return new Map(Object.entries(all).map(([host, value]) => [host, new Date(Number(value))]));
  }

  /** When the wait for `host` started, or null. */
  async waitStartedAt(host: string): Promise<Date | null> {
    const value = await this.redis.hget(this.key('wait-started'), shortHostname(host));
    return value === null ? null : new Date(Number(value));
  }

  /** Stops the wait clock of `host` (decided, or back up). */
  async clearWait(host: string): Promise<void> {
    await this.redis.hdel(this.key('wait-started'), shortHostname(host));
  }

  /** Forgets the packet time of `host` (after its re-enable). */
  async clearPackets(host: string): Promise<void> {
    await this.lastPackets.forget(host);
  }

  /**
   * Drops packet times older than `olderThanSeconds` (InstanceHA: 300 s once the table is large).
   * @returns how many were dropped
   */
  prune(olderThanSeconds: number, now: Date = new Date()): Promise<number> {
    return this.lastPackets.prune(olderThanSeconds, now);
  }
}
