import type { HostAgentReport, ProcessState } from '@lifeguard/contracts';
import { type HostAgentEvidence, LatestHostTimes } from '@lifeguard/instance-ha';
import { type RedisClient, redisKey } from '@lifeguard/runtime';

/** What the host agents said, as every node-monitor replica recorded it in Redis. */
export type HostAgentSnapshot = HostAgentEvidence;

/**
 * The host agents' reports in Redis, written by every replica's heartbeat listener so the leader sees
 * what any replica heard: per network a hash host → last heartbeat (`<prefix>:node-monitor:host-agent:
 * network:<name>`, the latest time kept), the set of network names, and a hash host → the last
 * process report with its time (`...:host-agent:processes`).
 */
export class HostAgentReports {
  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {}

  private key(...parts: string[]): string {
    return redisKey(this.keyPrefix, 'node-monitor', 'host-agent', ...parts);
  }

  /** One LatestHostTimes per network, made once (a heartbeat arrives every second per host and network). */
  private readonly networks = new Map<string, LatestHostTimes>();

  private network(name: string): LatestHostTimes {
    let times = this.networks.get(name);
    if (!times) {
      times = new LatestHostTimes(this.redis, this.key('network', name));
      this.networks.set(name, times);
    }
    return times;
  }

  /** Records a verified heartbeat of `host` carrying `report`, heard at `at`. */
  async record(host: string, report: HostAgentReport, at: Date = new Date()): Promise<void> {
    await this.redis.sadd(this.key('networks'), report.network);
    await this.network(report.network).record(host, at);
    await this.redis.hset(
      this.key('processes'),
      host,
      JSON.stringify({ at: at.getTime(), processes: report.processes }),
    );
  }

  /** Everything recorded; a process report that does not read back is left out. */
  async snapshot(): Promise<HostAgentSnapshot> {
    const names = (await this.redis.smembers(this.key('networks'))).sort();
    const networks = new Map<string, ReadonlyMap<string, Date>>();
    for (const name of names) networks.set(name, await this.network(name).all());
    const processes = new Map<string, { at: Date; processes: Record<string, ProcessState> }>();
    for (const [host, text] of Object.entries(await this.redis.hgetall(this.key('processes')))) {
      try {
        const value = JSON.parse(text) as { at: number; processes: Record<string, ProcessState> };
        processes.set(host, { at: new Date(value.at), processes: value.processes });
      } catch {
        // Written by this class only; a hand-edited value is skipped.
      }
    }
    return { networks, processes };
  }

  /** Forgets what is older than `olderThanSeconds` (hosts removed from the cloud, networks gone). */
  async prune(olderThanSeconds: number, now: Date = new Date()): Promise<void> {
    for (const name of await this.redis.smembers(this.key('networks'))) {
      const times = this.network(name);
      await times.prune(olderThanSeconds, now);
      if ((await times.all()).size === 0) await this.redis.srem(this.key('networks'), name);
    }
    const cutoff = now.getTime() - olderThanSeconds * 1000;
    const { processes } = await this.snapshot();
    const stale = [...processes].filter(([, report]) => report.at.getTime() < cutoff).map(([host]) => host);
    if (stale.length > 0) await this.redis.hdel(this.key('processes'), ...stale);
  }
}
