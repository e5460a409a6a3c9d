import { PROVISIONING_ENTITY_DHCP, PROVISIONING_ENTITY_L2 } from '@lifeguard/contracts';
import type { ProvisionedOutcome } from '../store/port-store.ts';

/**
 * Why a port is reported as stuck (the `reason` label of `lifeguard_provisioning_stuck_ports`):
 * its last block went but it is not ACTIVE because it is `unbound`, `binding_failed` or
 * `admin_down`; or a block of it waits for an agent that has been dead too long
 * (`l2_agent_dead`, `dhcp_agent_dead`).
 */
export const STUCK_PORT_REASONS = [
  'unbound',
  'binding_failed',
  'admin_down',
  'l2_agent_dead',
  'dhcp_agent_dead',
] as const;
export type StuckPortReason = (typeof STUCK_PORT_REASONS)[number];

/**
 * What the reconciler does with a port that awaits ACTIVE, from the outcome of setting it ACTIVE
 * again with the subscriber's own checks: `activated` — it was stuck and is now ACTIVE; `cleared` —
 * it is ACTIVE already, gone, or blocked again (its next completion brings it back), nothing to do;
 * otherwise (unbound, binding_failed, admin_down) it stays and is reported with that reason.
 */
export function awaitingPortVerdict(
  outcome: ProvisionedOutcome,
): { kind: 'activated' } | { kind: 'cleared' } | { kind: 'report'; reason: StuckPortReason } {
  if (outcome === 'activated') return { kind: 'activated' };
  if (
    outcome === 'already_active' ||
    outcome === 'missing' ||
    outcome === 'duplicate' ||
    outcome === 'blocked'
  ) {
    return { kind: 'cleared' };
  }
  if (outcome === 'unbound_retry') return { kind: 'report', reason: 'unbound' };
  return { kind: 'report', reason: outcome };
}

/** What the reconciler knows of a blocked port: its blocking entities and where its agents are. */
export interface BlockedPortView {
  readonly blocks: ReadonlyArray<string>;
  /** The port's `binding:host_id` ('' when unbound). */
  readonly host: string;
  /** Last heartbeats (milliseconds since the epoch) of the L2 agents on the port's host. */
  readonly l2AgentHeartbeats: ReadonlyArray<number>;
  /** Last heartbeats of the DHCP agents bound to the port's network. */
  readonly dhcpAgentHeartbeats: ReadonlyArray<number>;
}

/**
 * The reasons a blocked port waits in vain: an `L2` block on a bound port whose host has no L2
 * agent heard from within `deadAfterMilliseconds` (none registered counts as dead), a `DHCP` block
 * whose network has no DHCP agent heard from within it. Other entities are never judged (lifeguard
 * does not know who reports them).
 * @param now milliseconds since the epoch
 */
export function deadAgentReasons(
  port: BlockedPortView,
  now: number,
  deadAfterMilliseconds: number,
): StuckPortReason[] {
  const anyAlive = (heartbeats: ReadonlyArray<number>) =>
    heartbeats.some((heartbeat) => now - heartbeat <= deadAfterMilliseconds);
  const reasons: StuckPortReason[] = [];
  if (port.blocks.includes(PROVISIONING_ENTITY_L2) && port.host !== '' && !anyAlive(port.l2AgentHeartbeats)) {
    reasons.push('l2_agent_dead');
  }
  if (port.blocks.includes(PROVISIONING_ENTITY_DHCP) && !anyAlive(port.dhcpAgentHeartbeats)) {
    reasons.push('dhcp_agent_dead');
  }
  return reasons;
}
