import { DEFAULT_AGENT_DOWN_TIME_SECONDS } from '@lifeguard/contracts';
import type { RedisClient } from '@lifeguard/runtime';
import { type AgentView, byHostThenType, decodeAgent } from './agent-record.ts';
import { type OutboxDepth, readOutboxDepth } from './outbox-depth.ts';
import { decodePort, isUuidLike, type StoredPort } from './port-record.ts';
import type { ProvisioningKeys } from './provisioning-keys.ts';

/** Interface-name prefixes agents put before a truncated port id (neutron-lib INTERFACE_PREFIXES). */
const INTERFACE_PREFIXES = ['tap', 'qvo', 'sg-'] as const;

export type { OutboxDepth } from './outbox-depth.ts';

export interface ProvisioningReaderOptions {
  /** Neutron's agent_down_time in seconds (default 75): an agent is alive iff its last heartbeat is not older. */
  readonly agentDownTimeSeconds?: number;
  /** The clock in milliseconds (tests replace it). */
  readonly now?: () => number;
}

/**
 * The provisioning service's records in Redis, read only: plain reads (HGETALL, SMEMBERS, ZRANGE,
 * ZRANGEBYLEX, ZCARD, XLEN, XRANGE) of the keys the write-side stores (PortStore, BlockStore,
 * AgentRegistry, the outbox) keep. It installs no Lua script and defines no command on the
 * connection, so operator tools (`lifeguard blocks`, the console) read through it without touching
 * the service's writes; the write-side stores read through it too, so both decode a record alike.
 */
export class ProvisioningReader {
  private readonly agentDownTimeSeconds: number;
  private readonly now: () => number;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ProvisioningKeys,
    options: ProvisioningReaderOptions = {},
  ) {
    this.agentDownTimeSeconds = options.agentDownTimeSeconds ?? DEFAULT_AGENT_DOWN_TIME_SECONDS;
    this.now = options.now ?? Date.now;
  }

  /** The port, or null when it does not exist. */
  async port(portId: string): Promise<StoredPort | null> {
    return decodePort(await this.redis.hgetall(this.keys.port(portId)));
  }

  /**
   * Resolves a device name as ML2 does (docs/neutron-provisioning-rules.md#update_device_up-and-update_device_down): an interface prefix (`tap`, `qvo`, `sg-`) is
   * stripped and the rest matched as the start of exactly one port id; a UUID-like name is taken as
   * the port id as it is (not looked up: the caller finds out whether it exists); anything else is
   * tried as a MAC address (with `[mac, pci_slot]`, the port whose binding profile has that
   * `pci_slot`), then as the start of a port id.
   * @returns the port id, or null when no single port matches
   */
  async resolveDevice(device: string | readonly [string, string | null]): Promise<string | null> {
    const [name, pciSlot] = typeof device === 'string' ? [device, null] : device;
    for (const prefix of INTERFACE_PREFIXES) {
      if (name.startsWith(prefix)) return this.portIdByPrefix(name.slice(prefix.length));
    }
    // A full id is only ever a prefix of itself: no look-up needed.
    if (isUuidLike(name)) return name;
    const byMac = await this.portIdByMac(name, pciSlot);
    return byMac ?? this.portIdByPrefix(name);
  }

  /** The one port id starting with `prefix`, or null when none or several do (as ML2's get_port). */
  async portIdByPrefix(prefix: string): Promise<string | null> {
    if (prefix.length === 0) return null;
    const low = Buffer.from(`[${prefix}`);
    const high = Buffer.concat([Buffer.from(`[${prefix}`), Buffer.from([0xff])]);
    const matches = await this.redis.zrangebylex(this.keys.portIds, low, high, 'LIMIT', 0, 2);
    return matches.length === 1 ? matches[0]! : null;
  }

  private async portIdByMac(macAddress: string, pciSlot: string | null): Promise<string | null> {
    const ids = (await this.redis.smembers(this.keys.portsByMac(macAddress))).sort();
    if (ids.length === 0) return null;
    if (!pciSlot) return ids[0]!;
    for (const id of ids) {
      const port = await this.port(id);
      if (port?.['binding:profile'].pci_slot === pciSlot) return id;
    }
    return null;
  }

  /** The first `limit` port ids, in id order. */
  portIds(limit: number): Promise<string[]> {
    return this.redis.zrange(this.keys.portIds, 0, limit - 1);
  }

  /** How many ports are recorded. */
  portCount(): Promise<number> {
    return this.redis.zcard(this.keys.portIds);
  }

  /** The entities (`DHCP`, `L2`, ...) still blocking an object, sorted; none for an object never blocked. */
  async blockingEntities(objectId: string, objectType = 'port'): Promise<string[]> {
    return (await this.redis.smembers(this.keys.blocks(objectType, objectId))).sort();
  }

  /** The agent of that type on that host, or null. */
  async agent(agentType: string, host: string): Promise<AgentView | null> {
    const hash = await this.redis.hgetall(this.keys.agent(agentType, host));
    return decodeAgent(hash, this.now(), this.agentDownTimeSeconds);
  }

  /** Every registered agent, sorted by host then type. */
  async agents(): Promise<AgentView[]> {
    const members = await this.redis.smembers(this.keys.agentIndex);
    const agents = await Promise.all(
      members.map((member) => {
        const [agentType, host] = member.split('\n') as [string, string];
        return this.agent(agentType, host);
      }),
    );
    return agents.filter((agent): agent is AgentView => agent !== null).sort(byHostThenType);
  }

  /** Outbox depth (entries not yet published and trimmed) and the age of the oldest, in seconds. */
  outboxDepth(): Promise<OutboxDepth> {
    return readOutboxDepth(this.redis, this.keys.outbox, this.now());
  }
}
