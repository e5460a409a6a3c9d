import {
  heartbeatTimesKey,
  judgeHostReports,
  LatestHostTimes,
  shortHostname,
  toServiceView,
} from '@lifeguard/instance-ha';
import type { ComputeService } from '@lifeguard/openstack';
import type { RedisClient } from '@lifeguard/runtime';

/** Whether a host shows signs of running, and the evidence in words. */
export interface HostReporting {
  readonly reporting: boolean;
  /** One line per piece of evidence, e.g. `Nova: state up, updated_at 2 s ago (DELTA 30 s)`. */
  readonly evidence: ReadonlyArray<string>;
}

/**
 * Judges whether a host is running from its own reports: its `nova-compute` service (state and
 * `updated_at` against DELTA, never a `forced_down`, see judgeHostReports) and its last heartbeat
 * (seen within `deltaSeconds`). Pure: the caller reads the service and the heartbeat.
 * @param service the host's service as Nova lists it, or null when Nova has none
 * @param lastHeartbeat the host's last heartbeat, or null when none was recorded
 */
export function judgeHostReporting(
  service: ComputeService | null,
  lastHeartbeat: Date | null,
  deltaSeconds: number,
  now: Date = new Date(),
): HostReporting {
  const evidence: string[] = [];
  let reporting = false;
  if (service !== null) {
    const view = toServiceView(service, now);
    if ('shortHost' in view) {
      const reports = judgeHostReports(view, deltaSeconds);
      reporting = reports.reporting;
      evidence.push(`Nova: ${reports.evidence}${reports.reporting ? ': nova-compute is reporting' : ''}`);
    } else evidence.push(`Nova: the service record cannot be read (${view.reason})`);
  } else evidence.push('Nova: no nova-compute service');
  if (lastHeartbeat !== null) {
    const age = Math.max(0, (now.getTime() - lastHeartbeat.getTime()) / 1000);
    const seen = age <= deltaSeconds;
    reporting ||= seen;
    evidence.push(`heartbeat: last seen ${Math.round(age)} s ago${seen ? ': the host is running' : ''}`);
  }
  return { reporting, evidence };
}

/** The heartbeat times the node monitors record: each host agent's last accepted heartbeat. */
const heartbeatTimes = (redis: RedisClient, keyPrefix: string) =>
  new LatestHostTimes(redis, heartbeatTimesKey(keyPrefix));

/** The host's last heartbeat recorded by the node monitors, or null. */
export function lastHeartbeat(redis: RedisClient, keyPrefix: string, host: string): Promise<Date | null> {
  return heartbeatTimes(redis, keyPrefix).get(shortHostname(host));
}

/** The last accepted heartbeat of every host agent, by short host name. */
export function lastHeartbeats(redis: RedisClient, keyPrefix: string): Promise<Map<string, Date>> {
  return heartbeatTimes(redis, keyPrefix).all();
}
