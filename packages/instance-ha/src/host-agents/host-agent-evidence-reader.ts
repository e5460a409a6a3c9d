import { type RedisClient, redisKey } from '@lifeguard/runtime';
import { LatestHostTimes } from '../services/latest-host-times.ts';
import type { HostAgentEvidence } from './host-agent-findings.ts';

type ProcessReports = HostAgentEvidence['processes'];

/**
 * Where the node monitors keep what the host agents said (`<prefix>:node-monitor:host-agent:...`):
 * the set of network names, per network a hash host → last heartbeat (epoch milliseconds), and a
 * hash host → the last process report with its time.
 */
export function hostAgentKeys(keyPrefix: string) {
  const key = (...parts: string[]) => redisKey(keyPrefix, 'node-monitor', 'host-agent', ...parts);
  return {
    networks: key('networks'),
    network: (name: string) => key('network', name),
    processes: key('processes'),
  };
}

/** The process reports of the hash `processes`; a value that does not read back is left out. */
function parseProcessReports(hash: Record<string, string>): ProcessReports {
  const processes = new Map<string, { at: Date; processes: Record<string, 'running' | 'stopped'> }>();
  for (const [host, text] of Object.entries(hash)) {
    try {
      const value = JSON.parse(text) as { at: number; processes: Record<string, 'running' | 'stopped'> };
      if (typeof value.at === 'number' && value.processes && typeof value.processes === 'object')
        processes.set(host, { at: new Date(value.at), processes: value.processes });
    } catch {
      // Written by the node monitor only; a hand-edited value is skipped.
    }
  }
  return processes;
}

/**
 * Reads everything the host agents said, as every node-monitor replica recorded it: the node
 * monitor's review and detection, and every later action's re-check (the fencing and evacuation
 * workers), read the same keys.
 */
export async function readHostAgentEvidence(
  redis: RedisClient,
  keyPrefix: string,
): Promise<HostAgentEvidence> {
  const keys = hostAgentKeys(keyPrefix);
  const names = (await redis.smembers(keys.networks)).sort();
  const [processHash, ...times] = await Promise.all([
    redis.hgetall(keys.processes),
    ...names.map((name) => new LatestHostTimes(redis, keys.network(name)).all()),
  ]);
  const networks = new Map<string, ReadonlyMap<string, Date>>();
  for (const [index, name] of names.entries()) networks.set(name, times[index] as Map<string, Date>);
  return { networks, processes: parseProcessReports(processHash as Record<string, string>) };
}
