import { randomUUID } from 'node:crypto';
import { AGENT_TYPE_DHCP } from '@lifeguard/contracts';
import type { RedisClient } from '@lifeguard/runtime';
import type { Logger } from 'pino';
import type { ProvisioningMetrics } from '../metrics.ts';
import type { AgentView } from '../store/agent-record.ts';
import type { AgentRegistry } from '../store/agent-registry.ts';
import type { PortStore } from '../store/port-store.ts';
import type { ProvisioningKeys } from '../store/provisioning-keys.ts';
import {
  awaitingPortVerdict,
  deadAgentReasons,
  STUCK_PORT_REASONS,
  type StuckPortReason,
} from './stuck-port-rules.ts';

export interface StuckPortReconcilerOptions {
  redis: RedisClient;
  keys: ProvisioningKeys;
  ports: PortStore;
  agents: AgentRegistry;
  /** The agent types of the configured mechanism drivers (whose agents report `L2`). */
  l2AgentTypes: ReadonlyArray<string>;
  /** Seconds between rounds (LIFEGUARD_PROVISIONING_RECONCILE_INTERVAL_SECONDS). */
  intervalSeconds: number;
  /** Seconds a port awaits ACTIVE before the reconciler looks at it (..._RECONCILE_AFTER_SECONDS). */
  afterSeconds: number;
  /** Seconds an agent may be silent before its blocked ports are reported (..._RECONCILE_DEAD_AGENT_SECONDS). */
  deadAgentSeconds: number;
  logger: Logger;
  metrics?: ProvisioningMetrics | null;
  now?: () => number;
}

/** What one round found: ports set ACTIVE, ports cleared from the waiting set, and stuck ports by reason. */
export interface ReconcileRound {
  readonly activated: string[];
  readonly cleared: number;
  readonly stuck: Record<StuckPortReason, string[]>;
}

const AWAITING_BATCH = 500;
const SCAN_BATCH = 500;
/** Port ids named per reason in the round's warning. */
const LOGGED_PORTS = 10;
/** The reconciler's trigger entity: a migrating port set ACTIVE by it does not tell Nova. */
export const RECONCILER_ENTITY = 'reconciler';

/**
 * Finds the ports that would otherwise wait forever. (1) A port whose last block went (it got a
 * `provisioning.complete`) but that the port-status subscriber has not found ACTIVE after
 * `afterSeconds` — a lost event, a crash between two writes — is set ACTIVE with the subscriber's own
 * checks (bound, no block, admin up; `port.status.changed` and so Nova's `network-vif-plugged`
 * follow), or, when a check fails, reported with that reason. (2) A port blocked by an entity whose
 * agent has been silent longer than `deadAgentSeconds` is reported (never completed: its wiring is not
 * done). Reports: `lifeguard_provisioning_stuck_ports{reason}` and one warning per reason and round.
 */
export class StuckPortReconciler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(private readonly options: StuckPortReconcilerOptions) {}

  /** Runs a round every `intervalSeconds` (the first after one interval). */
  start(): void {
    const tick = () => {
      this.running = this.runOnce()
        .catch((error: unknown) => this.options.logger.warn({ err: error }, 'stuck-port round failed'))
        .finally(() => {
          this.running = null;
          if (this.timer !== null) this.timer = setTimeout(tick, this.options.intervalSeconds * 1000);
        });
    };
    this.timer = setTimeout(tick, this.options.intervalSeconds * 1000);
  }

  /** Stops the rounds and waits for the one in progress. */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /**
   * One round: the awaiting ports, then every blocked port.
   * @throws Error from Redis
   */
  async runOnce(): Promise<ReconcileRound> {
    const stuck = Object.fromEntries(STUCK_PORT_REASONS.map((reason) => [reason, [] as string[]])) as Record<
      StuckPortReason,
      string[]
    >;
    const { activated, cleared } = await this.reconcileAwaiting(stuck);
    await this.findBlockedByDeadAgents(stuck);
    this.report({ activated, cleared, stuck });
    return { activated, cleared, stuck };
  }

  private async reconcileAwaiting(
    stuck: Record<StuckPortReason, string[]>,
  ): Promise<{ activated: string[]; cleared: number }> {
    const { redis, keys, ports, afterSeconds } = this.options;
    const now = (this.options.now ?? Date.now)();
    const activated: string[] = [];
    let cleared = 0;
    const due = await redis.zrangebyscore(
      keys.portsAwaitingActive,
      '-inf',
      now - afterSeconds * 1000,
      'LIMIT',
      0,
      AWAITING_BATCH,
    );
    for (const portId of due) {
      // A fresh event id, remembered one second: the round's attempt is its own.
      const { outcome } = await ports.markProvisioned(portId, randomUUID(), RECONCILER_ENTITY, 1, true);
      const verdict = awaitingPortVerdict(outcome);
      if (verdict.kind === 'activated') activated.push(portId);
      else if (verdict.kind === 'cleared') {
        await redis.zrem(keys.portsAwaitingActive, portId);
        cleared++;
      } else stuck[verdict.reason].push(portId);
    }
    return { activated, cleared };
  }

  private async findBlockedByDeadAgents(stuck: Record<StuckPortReason, string[]>): Promise<void> {
    const { redis, keys, agents, l2AgentTypes, deadAgentSeconds } = this.options;
    const now = (this.options.now ?? Date.now)();
    const everyAgent = await agents.list();
    const heartbeats = (matches: (agent: AgentView) => boolean) =>
      everyAgent.filter(matches).map((agent) => agent.heartbeatMilliseconds);
    const dhcpHeartbeatsByNetwork = new Map<string, number[]>();
    let cursor = '0';
    do {
      const [next, members] = await redis.zscan(keys.portIds, cursor, 'COUNT', SCAN_BATCH);
      cursor = next;
      const portIds = members.filter((_, index) => index % 2 === 0);
      const pipeline = redis.pipeline();
      for (const portId of portIds) {
        pipeline.smembers(keys.blocks('port', portId));
        pipeline.hmget(keys.port(portId), 'binding:host_id', 'network_id');
      }
      const replies = (await pipeline.exec()) ?? [];
      for (const [index, portId] of portIds.entries()) {
        const blocks = (replies[2 * index]?.[1] as string[] | undefined) ?? [];
        if (blocks.length === 0) continue;
        const [hostJson, networkJson] =
          (replies[2 * index + 1]?.[1] as Array<string | null> | undefined) ?? [];
        const host = JSON.parse(hostJson ?? '""') as string;
        const networkId = JSON.parse(networkJson ?? '""') as string;
        let dhcpHeartbeats = dhcpHeartbeatsByNetwork.get(networkId);
        if (dhcpHeartbeats === undefined) {
          const dhcpHosts = new Set(await redis.smembers(keys.networkDhcpAgents(networkId)));
          dhcpHeartbeats = heartbeats(
            (agent) => agent.agent_type === AGENT_TYPE_DHCP && dhcpHosts.has(agent.host),
          );
          dhcpHeartbeatsByNetwork.set(networkId, dhcpHeartbeats);
        }
        const reasons = deadAgentReasons(
          {
            blocks,
            host,
            l2AgentHeartbeats: heartbeats(
              (agent) => agent.host === host && l2AgentTypes.includes(agent.agent_type),
            ),
            dhcpAgentHeartbeats: dhcpHeartbeats,
          },
          now,
          deadAgentSeconds * 1000,
        );
        for (const reason of reasons) stuck[reason].push(portId);
      }
    } while (cursor !== '0');
  }

  private report(round: ReconcileRound): void {
    const { logger, metrics } = this.options;
    if (round.activated.length > 0) {
      metrics?.reconciledPorts.inc({ outcome: 'activated' }, round.activated.length);
      logger.warn(
        { count: round.activated.length, ports: round.activated.slice(0, LOGGED_PORTS) },
        'ports stuck without ACTIVE after their last block went were set ACTIVE',
      );
    }
    if (round.cleared > 0) metrics?.reconciledPorts.inc({ outcome: 'cleared' }, round.cleared);
    for (const reason of STUCK_PORT_REASONS) {
      const portIds = round.stuck[reason];
      metrics?.stuckPorts.set({ reason }, portIds.length);
      if (portIds.length > 0) {
        logger.warn({ reason, count: portIds.length, ports: portIds.slice(0, LOGGED_PORTS) }, 'stuck ports');
      }
    }
  }
}
