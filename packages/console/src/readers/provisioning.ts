import { DEFAULT_AGENT_DOWN_TIME_SECONDS } from '@lifeguard/contracts';
import {
  type AgentView,
  type OutboxDepth,
  ProvisioningKeys,
  ProvisioningReader,
} from '@lifeguard/provisioning-blocks';
import type { ConsoleConnections } from '../connections.ts';
import { type Seen, see } from './seen.ts';

/** How many ports the provisioning page reads at most (ordered by id). */
export const PORTS_READ_CAP = 500;

/** A port that still has provisioning blocks, and the entities holding them. */
export interface BlockedPort {
  readonly portId: string;
  readonly status: string;
  readonly host: string;
  readonly deviceOwner: string;
  /** Entities (`DHCP`, `L2`, ...) that have not reported completion. */
  readonly blocks: ReadonlyArray<string>;
}

export interface ProvisioningView {
  /** Ports counted by status (`ACTIVE`, `DOWN`, `BUILD`, ...), of the first PORTS_READ_CAP ports. */
  readonly portsByStatus: Readonly<Record<string, number>>;
  readonly portsRead: number;
  readonly portsTotal: number;
  readonly blockedPorts: ReadonlyArray<BlockedPort>;
  readonly agents: ReadonlyArray<AgentView>;
  /** Outbox entries not yet published, and the age of the oldest in seconds. */
  readonly outbox: OutboxDepth;
}

/**
 * Reads the provisioning service's records in Redis with its read-only ProvisioningReader (plain
 * reads, no script installed on the console's connection): ports and their blocks (as
 * `lifeguard blocks`), agents and their liveness (agent_down_time: the
 * LIFEGUARD_PROVISIONING_AGENT_DOWN_TIME_SECONDS of the environment, else Neutron's 75 s), the
 * outbox depth and lag.
 */
export async function readProvisioning(
  connections: ConsoleConnections,
  env: NodeJS.ProcessEnv,
): Promise<Seen<ProvisioningView>> {
  return see('Redis', connections.config.LIFEGUARD_CONSOLE_READ_TIMEOUT_SECONDS, async () => {
    const records = new ProvisioningReader(
      await connections.redis(),
      new ProvisioningKeys(connections.keyPrefix),
      {
        agentDownTimeSeconds:
          Number(env.LIFEGUARD_PROVISIONING_AGENT_DOWN_TIME_SECONDS) || DEFAULT_AGENT_DOWN_TIME_SECONDS,
      },
    );
    const [ids, total, agents, outbox] = await Promise.all([
      records.portIds(PORTS_READ_CAP),
      records.portCount(),
      records.agents(),
      records.outboxDepth(),
    ]);
    const portsByStatus: Record<string, number> = {};
    const blockedPorts: BlockedPort[] = [];
    for (const id of ids) {
      const port = await records.port(id);
      if (port === null) continue;
      portsByStatus[port.status] = (portsByStatus[port.status] ?? 0) + 1;
      const holding = await records.blockingEntities(port.id, 'port');
      if (holding.length > 0) {
        blockedPorts.push({
          portId: port.id,
          status: port.status,
          host: port['binding:host_id'],
          deviceOwner: port.device_owner,
          blocks: holding,
        });
      }
    }
    return { portsByStatus, portsRead: ids.length, portsTotal: total, blockedPorts, agents, outbox };
  });
}
