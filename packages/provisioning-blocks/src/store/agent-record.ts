import { Agent } from '@lifeguard/contracts';

/**
 * An agent record with its liveness computed from `agent_down_time`, and its last heartbeat as
 * received (milliseconds since the epoch, this service's clock).
 */
export type AgentView = Agent & { readonly alive: boolean; readonly heartbeatMilliseconds: number };

/**
 * Reads an agent hash back (null for an empty hash, i.e. no such agent), alive when its last heartbeat
 * is not older than `agentDownTimeSeconds` at `nowMilliseconds`.
 */
export function decodeAgent(
  hash: Record<string, string>,
  nowMilliseconds: number,
  agentDownTimeSeconds: number,
): AgentView | null {
  if (!hash.id) return null;
  const state = JSON.parse(hash.state ?? '{}') as Record<string, unknown>;
  const agent = Agent.parse({
    ...state,
    id: hash.id,
    admin_state_up: hash.admin_state_up === 'true',
    availability_zone: JSON.parse(hash.availability_zone ?? 'null'),
    resource_versions: JSON.parse(hash.resource_versions ?? '{}'),
    created_at: hash.created_at,
    started_at: hash.started_at,
    heartbeat_timestamp: hash.heartbeat_timestamp,
  });
  const heartbeatMilliseconds = Number(hash.heartbeat_milliseconds ?? 0);
  const alive = nowMilliseconds - heartbeatMilliseconds <= agentDownTimeSeconds * 1000;
  return { ...agent, alive, heartbeatMilliseconds };
}

/** Orders agents by host, then by type (how they are listed). */
export function byHostThenType(a: AgentView, b: AgentView): number {
  return a.host.localeCompare(b.host) || a.agent_type.localeCompare(b.agent_type);
}
