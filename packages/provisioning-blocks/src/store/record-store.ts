import { AGENT_TYPE_DHCP, Network, Subnet } from '@lifeguard/contracts';
import type { RedisClient } from '@lifeguard/runtime';
import { defineRedisScripts, runScript } from '@lifeguard/runtime';
import { bindDhcpAgentScript } from '../lua/agent-scripts.ts';
import type { ProvisioningKeys } from './provisioning-keys.ts';

/** Outcome of creating a record: created, already there with the same content, or a different one. */
export type CreateOutcome = 'created' | 'unchanged' | 'conflict';

/**
 * Network and subnet records (JSON strings) and the DHCP-agent-to-network bindings the ML2 DHCP
 * rule reads (docs/neutron-provisioning-rules.md#dhcp-block-rule): a network is "hosted" by the DHCP agents bound to it, whatever their
 * liveness, as Neutron's query does.
 */
export class RecordStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ProvisioningKeys,
  ) {
    defineRedisScripts(redis, [bindDhcpAgentScript]);
  }

  private async create(key: string, record: object): Promise<CreateOutcome> {
    const body = JSON.stringify(record);
    if ((await this.redis.set(key, body, 'NX')) === 'OK') return 'created';
    return (await this.redis.get(key)) === body ? 'unchanged' : 'conflict';
  }

  async createNetwork(network: Network): Promise<CreateOutcome> {
    return this.create(this.keys.network(network.id), Network.parse(network));
  }

  async getNetwork(networkId: string): Promise<Network | null> {
    const body = await this.redis.get(this.keys.network(networkId));
    return body ? Network.parse(JSON.parse(body)) : null;
  }

  /** Deletes a network and its DHCP agent bindings. @returns false when it did not exist */
  async deleteNetwork(networkId: string): Promise<boolean> {
    const hosts = await this.redis.smembers(this.keys.networkDhcpAgents(networkId));
    const transaction = this.redis.multi().del(this.keys.network(networkId));
    for (const host of hosts) transaction.srem(this.keys.dhcpAgentNetworks(host), networkId);
    transaction.del(this.keys.networkDhcpAgents(networkId));
    const results = await transaction.exec();
    return Number(results?.[0]?.[1] ?? 0) === 1;
  }

  /** Creates a subnet of an existing network. @returns `no-network` when its network does not exist */
  async createSubnet(subnet: Subnet): Promise<CreateOutcome | 'no-network'> {
    if (!(await this.redis.exists(this.keys.network(subnet.network_id)))) return 'no-network';
    return this.create(this.keys.subnet(subnet.id), Subnet.parse(subnet));
  }

  /** Applies changes to a subnet. @returns false when it does not exist */
  async updateSubnet(
    subnetId: string,
    changes: Partial<Omit<Subnet, 'id' | 'network_id'>>,
  ): Promise<boolean> {
    const key = this.keys.subnet(subnetId);
    const body = await this.redis.get(key);
    if (!body) return false;
    const updated = Subnet.parse({ ...JSON.parse(body), ...changes });
    await this.redis.set(key, JSON.stringify(updated), 'XX');
    return true;
  }

  async deleteSubnet(subnetId: string): Promise<boolean> {
    return (await this.redis.del(this.keys.subnet(subnetId))) === 1;
  }

  /** The subnets with these ids that exist. */
  async getSubnets(subnetIds: ReadonlyArray<string>): Promise<Subnet[]> {
    if (subnetIds.length === 0) return [];
    const bodies = await this.redis.mget(...subnetIds.map((id) => this.keys.subnet(id)));
    return bodies
      .filter((body): body is string => body !== null)
      .map((body) => Subnet.parse(JSON.parse(body)));
  }

  /**
   * Binds the DHCP agent of `host` to a network (it now hosts the network).
   * @returns `no-network` or `no-agent` (no DHCP agent registered on that host) when it cannot
   */
  async addDhcpAgentToNetwork(networkId: string, host: string): Promise<'ok' | 'no-network' | 'no-agent'> {
    return String(
      await runScript(
        this.redis,
        bindDhcpAgentScript,
        [
          this.keys.network(networkId),
          this.keys.agent(AGENT_TYPE_DHCP, host),
          this.keys.networkDhcpAgents(networkId),
          this.keys.dhcpAgentNetworks(host),
        ],
        [host, networkId],
      ),
    ) as 'ok' | 'no-network' | 'no-agent';
  }

  /** @returns false when that agent did not host the network */
  async removeDhcpAgentFromNetwork(networkId: string, host: string): Promise<boolean> {
    const results = await this.redis
      .multi()
      .srem(this.keys.networkDhcpAgents(networkId), host)
      .srem(this.keys.dhcpAgentNetworks(host), networkId)
      .exec();
    return Number(results?.[0]?.[1] ?? 0) === 1;
  }

  /** Removes every network binding of a DHCP agent's host (the agent was deleted). */
  async removeDhcpAgent(host: string): Promise<void> {
    const networks = await this.redis.smembers(this.keys.dhcpAgentNetworks(host));
    const transaction = this.redis.multi();
    for (const networkId of networks) transaction.srem(this.keys.networkDhcpAgents(networkId), host);
    transaction.del(this.keys.dhcpAgentNetworks(host));
    await transaction.exec();
  }

  /** The hosts of the DHCP agents hosting a network, sorted. */
  async dhcpAgentHosts(networkId: string): Promise<string[]> {
    return (await this.redis.smembers(this.keys.networkDhcpAgents(networkId))).sort();
  }
}
