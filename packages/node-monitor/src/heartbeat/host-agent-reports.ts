import type { HostAgentReport } from '@lifeguard/contracts';
import {
  type HostAgentEvidence,
  hostAgentKeys,
  LatestHostTimes,
  readHostAgentEvidence,
} from '@lifeguard/instance-ha';
import type { RedisClient } from '@lifeguard/runtime';

/** What the host agents said, as every node-monitor replica recorded it in Redis. */
export type HostAgentSnapshot = HostAgentEvidence;

/**
 * The host agents' reports in Redis, written by every replica's heartbeat listener so the leader sees
 * what any replica heard: per network a hash host → last heartbeat (`<prefix>:node-monitor:host-agent:
 * network:<name>`, the latest time kept), the set of network names, and a hash host → the last
 * process report with its time (`...:host-agent:processes`).
 */
export class HostAgentReports {
  private readonly keys: ReturnType<typeof hostAgentKeys>;

  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {
    this.keys = hostAgentKeys(keyPrefix);
  }

  /** One LatestHostTimes per network, made once (a heartbeat arrives every second per host and network). */
  private readonly networks = new Map<string, LatestHostTimes>();

  private network(name: string): LatestHostTimes {
    let times = this.networks.get(name);
    if (!times) {
      times = new LatestHostTimes(this.redis, this.keys.network(name));
      this.networks.set(name, times);
    }
    return times;
  }

  /** Records a verified heartbeat of `host` carrying `report`, heard at `at`. */
  async record(host: string, report: HostAgentReport, at: Date = new Date()): Promise<void> {
    await this.redis.sadd(this.keys.networks, report.network);
    await this.network(report.network).record(host, at);
    await this.redis.hset(
      this.keys.processes,
      host,
      JSON.stringify({ at: at.getTime(), processes: report.processes }),
    );
  }

  /** Everything recorded (readHostAgentEvidence). */
  snapshot(): Promise<HostAgentSnapshot> {
    return readHostAgentEvidence(this.redis, this.keyPrefix);
  }

  /** Forgets what is older than `olderThanSeconds` (hosts removed from the cloud, networks gone). */
  async prune(olderThanSeconds: number, now: Date = new Date()): Promise<void> {
    for (const name of await this.redis.smembers(this.keys.networks)) {
      const times = this.network(name);
      await times.prune(olderThanSeconds, now);
      if ((await times.all()).size === 0) await this.redis.srem(this.keys.networks, name);
    }
    const cutoff = now.getTime() - olderThanSeconds * 1000;
    const { processes } = await this.snapshot();
    const stale = [...processes].filter(([, report]) => report.at.getTime() < cutoff).map(([host]) => host);
    if (stale.length > 0) await this.redis.hdel(this.keys.processes, ...stale);
  }
}
