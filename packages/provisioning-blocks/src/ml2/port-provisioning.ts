import { randomUUID } from 'node:crypto';
import {
  type EventSource,
  Port,
  PROVISIONING_ENTITY_DHCP,
  PROVISIONING_ENTITY_L2,
  portStatusChangedEvent,
} from '@lifeguard/contracts';
import type { Logger } from 'pino';
import { ConcurrentUpdateError } from '../errors.ts';
import type { ProvisioningMetrics } from '../metrics.ts';
import type { AgentRegistry } from '../store/agent-registry.ts';
import type { StoredPort } from '../store/port-record.ts';
import type { BlockOperation, PortStore } from '../store/port-store.ts';
import type { RecordStore } from '../store/record-store.ts';
import {
  addressesChanged,
  bindingRequestChanged,
  dhcpBlockDecision,
  type MechanismDriver,
  needsL2Block,
} from './ml2-rules.ts';

export interface PortProvisioningOptions {
  ports: PortStore;
  records: RecordStore;
  agents: AgentRegistry;
  source: EventSource;
  logger: Logger;
  metrics?: ProvisioningMetrics | null;
  /** Neutron's enable_traditional_dhcp (default true): false turns the DHCP rule off. */
  enableTraditionalDhcp: boolean;
  /** The agent mechanism drivers configured (ML2 mechanism_drivers). */
  mechanismDrivers: ReadonlyArray<MechanismDriver>;
  /** Optimistic write attempts before giving up with ConcurrentUpdateError (default 10). */
  maxAttempts?: number;
}

/** What a port write did, and which blocks it added or cleared. */
export interface PortChange {
  readonly outcome: 'created' | 'updated' | 'unchanged' | 'conflict' | 'missing' | 'deleted';
  readonly blocksAdded: ReadonlyArray<string>;
  readonly blocksRemoved: ReadonlyArray<string>;
}

const stripRevision = ({ revision: _revision, ...port }: StoredPort): Port => port;

/**
 * Port create/update/delete with ML2's provisioning-block rules (docs/neutron-provisioning-rules.md#dhcp-block-rule, #l2-block-rule), each written
 * atomically with its block changes (and, for a status change, its `port.status.changed` event);
 * concurrent writers are detected by the port's revision and retried.
 */
export class PortProvisioning {
  private readonly maxAttempts: number;

  constructor(private readonly options: PortProvisioningOptions) {
    this.maxAttempts = options.maxAttempts ?? 10;
  }

  private async dhcpOperation(port: Port): Promise<BlockOperation | null> {
    const { records, enableTraditionalDhcp } = this.options;
    if (!enableTraditionalDhcp) return null;
    const [subnets, hosts] = await Promise.all([
      records.getSubnets([...new Set(port.fixed_ips.map((fixedIp) => fixedIp.subnet_id))]),
      records.dhcpAgentHosts(port.network_id),
    ]);
    const decision = dhcpBlockDecision(port, {
      enableTraditionalDhcp,
      subnets,
      networkHasDhcpAgent: hosts.length > 0,
    });
    if (decision === 'none') return null;
    return { operation: decision, entity: PROVISIONING_ENTITY_DHCP };
  }

  private async l2Operation(port: Port): Promise<BlockOperation | null> {
    const { agents, mechanismDrivers } = this.options;
    if (!port['binding:host_id']) return null;
    const types = await agents.typesOnHost(
      port['binding:host_id'],
      mechanismDrivers.map((driver) => driver.agentType),
    );
    return needsL2Block(port, mechanismDrivers, types)
      ? { operation: 'add', entity: PROVISIONING_ENTITY_L2 }
      : null;
  }

  private account(
    portId: string,
    operations: ReadonlyArray<BlockOperation>,
    changed: ReadonlyArray<boolean>,
  ) {
    const { metrics, logger } = this.options;
    const added: string[] = [];
    const removed: string[] = [];
    operations.forEach((each, index) => {
      if (!changed[index]) return;
      if (each.operation === 'add') {
        added.push(each.entity);
        metrics?.blocksAdded.inc({ entity: each.entity });
        logger.debug(
          { portId, entity: each.entity },
          `Transition to ACTIVE for port object ${portId} will not be triggered until provisioned by entity ${each.entity}.`,
        );
      } else {
        removed.push(each.entity);
        metrics?.blocksRemoved.inc({ entity: each.entity, reason: 'cleared' });
      }
    });
    return { added, removed };
  }

  /**
   * Creates a port (ML2 create_port): the DHCP rule, and the L2 rule when a host is given.
   * Creating a port that exists with the same content is a no-op (`unchanged`, safe on redelivery);
   * with different content it is refused (`conflict`).
   */
  async create(input: Port): Promise<PortChange> {
    const port = Port.parse(input);
    const operations = [await this.dhcpOperation(port), await this.l2Operation(port)].filter(
      (each): each is BlockOperation => each !== null,
    );
    const result = await this.options.ports.write(
      port.id,
      null,
      port,
      { previous: port.mac_address, current: port.mac_address },
      operations,
      null,
    );
    if (result.status === 'ok') {
      const { added, removed } = this.account(port.id, operations, result.blockChanges);
      return { outcome: 'created', blocksAdded: added, blocksRemoved: removed };
    }
    const existing = await this.options.ports.get(port.id);
    const same = existing !== null && JSON.stringify(stripRevision(existing)) === JSON.stringify(port);
    return { outcome: same ? 'unchanged' : 'conflict', blocksAdded: [], blocksRemoved: [] };
  }

  /**
   * Updates a port (ML2 update_port): a changed binding request clears the binding (`binding:vif_type`
   * `unbound`, unless the update names one) and forces DOWN (unless it names a status); a changed host
   * re-runs the L2 rule; changed `fixed_ips` or MAC re-run the DHCP rule (add or clear); nothing else
   * touches blocks (bug 1714655). A status change appends `port.status.changed`.
   * @throws ConcurrentUpdateError when the port keeps changing under us
   */
  async update(portId: string, changes: Partial<Omit<Port, 'id'>>): Promise<PortChange> {
    const { ports, source, metrics } = this.options;
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      const current = await ports.get(portId);
      if (!current) return { outcome: 'missing', blocksAdded: [], blocksRemoved: [] };
      const original = stripRevision(current);
      const updated = Port.parse({ ...original, ...changes, id: portId });
      if (bindingRequestChanged(original, updated)) {
        if (changes['binding:vif_type'] === undefined) updated['binding:vif_type'] = 'unbound';
        if (changes.status === undefined) updated.status = 'DOWN';
      }
      const operations: BlockOperation[] = [];
      if (original['binding:host_id'] !== updated['binding:host_id']) {
        const l2 = await this.l2Operation(updated);
        if (l2) operations.push(l2);
      }
      if (addressesChanged(original, updated)) {
        const dhcp = await this.dhcpOperation(updated);
        if (dhcp) operations.push(dhcp);
      }
      const statusEvent =
        updated.status === original.status
          ? null
          : portStatusChangedEvent(
              { id: randomUUID(), occurredAt: new Date().toISOString(), source },
              {
                portId,
                previousStatus: original.status,
                status: updated.status,
                deviceId: updated.device_id,
                deviceOwner: updated.device_owner,
                host: updated['binding:host_id'],
              },
            );
      const result = await ports.write(
        portId,
        current.revision,
        updated,
        { previous: original.mac_address, current: updated.mac_address },
        operations,
        statusEvent,
      );
      if (result.status === 'missing') return { outcome: 'missing', blocksAdded: [], blocksRemoved: [] };
      if (result.status !== 'ok') continue;
      if (statusEvent) metrics?.statusTransitions.inc({ from: original.status, to: updated.status });
      const { added, removed } = this.account(portId, operations, result.blockChanges);
      return { outcome: 'updated', blocksAdded: added, blocksRemoved: removed };
    }
    throw new ConcurrentUpdateError('port', portId, this.maxAttempts);
  }

  /**
   * Deletes a port and, as Neutron's cascade, its blocks.
   * @throws ConcurrentUpdateError when the port keeps changing under us
   */
  async delete(portId: string): Promise<PortChange> {
    const { ports, metrics } = this.options;
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      const current = await ports.get(portId);
      if (!current) return { outcome: 'missing', blocksAdded: [], blocksRemoved: [] };
      const result = await ports.delete(current);
      if (result.status === 'missing') return { outcome: 'missing', blocksAdded: [], blocksRemoved: [] };
      if (result.status !== 'ok') continue;
      for (const entity of result.removedBlocks) metrics?.blocksRemoved.inc({ entity, reason: 'deleted' });
      return { outcome: 'deleted', blocksAdded: [], blocksRemoved: result.removedBlocks };
    }
    throw new ConcurrentUpdateError('port', portId, this.maxAttempts);
  }
}
