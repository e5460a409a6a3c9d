import { redisKey } from '@lifeguard/runtime';

/**
 * The Redis keys of the provisioning service, all under `<prefix>:provisioning:`. With a
 * `{hash tag}` in the deployment prefix every key lands in one Redis Cluster slot, which the
 * multi-key Lua scripts need.
 */
export class ProvisioningKeys {
  readonly root: string;

  constructor(readonly prefix: string) {
    this.root = redisKey(prefix, 'provisioning');
  }

  /** A record (`port`, `network`, `subnet`, or a registered type): `<root>:<type>:<id>`. */
  record(objectType: string, objectId: string): string {
    return `${this.root}:${objectType}:${objectId}`;
  }

  port(portId: string): string {
    return this.record('port', portId);
  }

  network(networkId: string): string {
    return this.record('network', networkId);
  }

  subnet(subnetId: string): string {
    return this.record('subnet', subnetId);
  }

  /** The set of entities still blocking an object: `<root>:blocks:<type>:<id>`. */
  blocks(objectType: string, objectId: string): string {
    return `${this.root}:blocks:${objectType}:${objectId}`;
  }

  /**
   * The id of the `provisioning.complete` event of an object's current provisioning round:
   * `<root>:completed:<type>:<id>`. Written when the object's blocks are found empty, deleted when a
   * block is added (a new round) or the object is deleted; a completion repeated meanwhile (an agent's
   * retried call, a resync) announces the same transition under the same id
   * (docs/design.md#event-ids).
   */
  completion(objectType: string, objectId: string): string {
    return `${this.root}:completed:${objectType}:${objectId}`;
  }

  /**
   * The mark that Nova was told of a port event (`<root>:nova-told:<eventId>`): set once Nova answered
   * for it, so a redelivered event (a crash before its ack) is not sent to Nova twice.
   */
  novaTold(eventId: string): string {
    return `${this.root}:nova-told:${eventId}`;
  }

  /** The transactional outbox stream of events waiting to be published. */
  get outbox(): string {
    return `${this.root}:outbox`;
  }

  /** Outbox entries the relay could not publish (no valid event), each with `streamId` and `reason`. */
  get deadOutbox(): string {
    return `${this.root}:outbox:dead`;
  }

  /**
   * Sorted set of the ports whose last block went (a `provisioning.complete` was emitted) and that
   * the port-status subscriber has not yet found ACTIVE (or gone); score: when, in milliseconds.
   */
  get portsAwaitingActive(): string {
    return `${this.root}:ports-awaiting-active`;
  }

  /** Sorted set (all scores 0) of every port id, for the prefix look-ups of truncated device names. */
  get portIds(): string {
    return `${this.root}:port-ids`;
  }

  /** Set of the ids of the ports with one MAC address. */
  portsByMac(macAddress: string): string {
    return `${this.root}:ports-by-mac:${macAddress.toLowerCase()}`;
  }

  /** An agent, keyed by `(agent_type, host)` as Neutron keys it. */
  agent(agentType: string, host: string): string {
    return `${this.root}:agents:${agentType}:${host}`;
  }

  /** Set of every agent as `<agent_type>\n<host>` (for listing). */
  get agentIndex(): string {
    return `${this.root}:agent-index`;
  }

  /** Set of the hosts of the DHCP agents hosting (bound to) a network. */
  networkDhcpAgents(networkId: string): string {
    return `${this.root}:network-dhcp-agents:${networkId}`;
  }

  /** Set of the networks a DHCP agent's host hosts (reverse of networkDhcpAgents). */
  dhcpAgentNetworks(host: string): string {
    return `${this.root}:dhcp-agent-networks:${host}`;
  }

  /** An oslo request already handled (duplicate suppression by `_unique_id`), holding its reply. */
  handledRequest(uniqueId: string): string {
    return `${this.root}:rpc-handled:${uniqueId}`;
  }

  /** A `provisioning.complete` event the port-status subscriber already handled. */
  handledEvent(eventId: string): string {
    return `${this.root}:event-handled:${eventId}`;
  }
}
