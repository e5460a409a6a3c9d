import { heartbeatTimesKey, LatestHostTimes } from '@lifeguard/instance-ha';
import type { RedisClient } from '@lifeguard/runtime';

/**
 * The last heartbeat per host (short name) in Redis, so the leading monitor sees heartbeats that any
 * replica received. Key `<prefix>:node-monitor:heartbeat:last` (hash of host → epoch milliseconds).
 */
export class HeartbeatStore {
  private readonly times: LatestHostTimes;

  constructor(redis: RedisClient, keyPrefix: string) {
    this.times = new LatestHostTimes(redis, heartbeatTimesKey(keyPrefix));
  }

  /** Records a heartbeat from `host` at `at` (an older time than the recorded one is ignored). */
  record(host: string, at: Date = new Date()): Promise<void> {
    return this.times.record(host, at);
  }

  /** Every host's last heartbeat time. */
  all(): Promise<Map<string, Date>> {
    return this.times.all();
  }

  /** Drops entries older than `olderThanSeconds` (InstanceHA: 600 s). @returns how many */
  prune(olderThanSeconds: number, now: Date = new Date()): Promise<number> {
    return this.times.prune(olderThanSeconds, now);
  }
}
