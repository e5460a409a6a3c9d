import type { ProvisioningCommand } from '@lifeguard/contracts';
import { RejectedMessageError } from '@lifeguard/runtime';
import type { Logger } from 'pino';
import type { ProvisioningMetrics } from '../metrics.ts';
import type { PortProvisioning } from '../ml2/port-provisioning.ts';
import type { AgentRegistry } from '../store/agent-registry.ts';
import type { RecordStore } from '../store/record-store.ts';
import { OrderedExecutor } from './ordered-executor.ts';

export interface CommandHandlerOptions {
  portProvisioning: PortProvisioning;
  records: RecordStore;
  agents: AgentRegistry;
  logger: Logger;
  metrics?: ProvisioningMetrics | null;
}

/** The order key of a command: port commands by port id, every other command is a barrier. */
function orderKey(command: ProvisioningCommand): string | null {
  switch (command.command) {
    case 'port.create':
      return command.port.id;
    case 'port.update':
    case 'port.delete':
      return command.port_id;
    default:
      return null;
  }
}

/**
 * Applies the native record commands (ProvisioningCommand) in their arrival order per port (see
 * OrderedExecutor). Every command is safe to apply twice (a redelivery): creating what exists with
 * the same content and deleting what is gone are no-ops. Commands that can never succeed throw
 * RejectedMessageError, so the consumer dead-letters them with the reason.
 */
export class CommandHandler {
  private readonly executor = new OrderedExecutor();

  constructor(private readonly options: CommandHandlerOptions) {}

  /** Applies one command (in order). @throws RejectedMessageError when it cannot apply */
  handle(command: ProvisioningCommand): Promise<void> {
    return this.executor.run(orderKey(command), async () => {
      try {
        const outcome = await this.apply(command);
        this.options.metrics?.commands.inc({ command: command.command, outcome });
        this.options.logger.debug({ command: command.command, outcome }, 'command applied');
      } catch (error) {
        if (error instanceof RejectedMessageError) {
          this.options.metrics?.commands.inc({ command: command.command, outcome: 'rejected' });
        }
        throw error;
      }
    });
  }

  private async apply(command: ProvisioningCommand): Promise<'applied' | 'unchanged'> {
    const { portProvisioning, records, agents } = this.options;
    switch (command.command) {
      case 'network.create': {
        const outcome = await records.createNetwork(command.network);
        if (outcome === 'conflict') {
          throw new RejectedMessageError(
            `network ${command.network.id} already exists with other attributes`,
          );
        }
        return outcome === 'created' ? 'applied' : 'unchanged';
      }
      case 'network.delete':
        return (await records.deleteNetwork(command.network_id)) ? 'applied' : 'unchanged';
      case 'subnet.create': {
        const outcome = await records.createSubnet(command.subnet);
        if (outcome === 'no-network') {
          throw new RejectedMessageError(
            `subnet ${command.subnet.id}: network ${command.subnet.network_id} does not exist`,
          );
        }
        if (outcome === 'conflict') {
          throw new RejectedMessageError(`subnet ${command.subnet.id} already exists with other attributes`);
        }
        return outcome === 'created' ? 'applied' : 'unchanged';
      }
      case 'subnet.update':
        if (!(await records.updateSubnet(command.subnet_id, command.changes))) {
          throw new RejectedMessageError(`subnet ${command.subnet_id} does not exist`);
        }
        return 'applied';
      case 'subnet.delete':
        return (await records.deleteSubnet(command.subnet_id)) ? 'applied' : 'unchanged';
      case 'port.create': {
        const change = await portProvisioning.create(command.port);
        if (change.outcome === 'conflict') {
          throw new RejectedMessageError(
            `port ${command.port.id} already exists with other attributes; send port.update to change it`,
          );
        }
        return change.outcome === 'created' ? 'applied' : 'unchanged';
      }
      case 'port.update': {
        const change = await portProvisioning.update(command.port_id, command.changes);
        if (change.outcome === 'missing')
          throw new RejectedMessageError(`port ${command.port_id} does not exist`);
        return 'applied';
      }
      case 'port.delete':
        return (await portProvisioning.delete(command.port_id)).outcome === 'deleted'
          ? 'applied'
          : 'unchanged';
      case 'network.dhcp_agent.add': {
        const outcome = await records.addDhcpAgentToNetwork(command.network_id, command.host);
        if (outcome === 'no-network') {
          throw new RejectedMessageError(`network ${command.network_id} does not exist`);
        }
        if (outcome === 'no-agent') {
          throw new RejectedMessageError(
            `no DHCP agent is registered on host ${command.host}; it must report its state first`,
          );
        }
        return 'applied';
      }
      case 'network.dhcp_agent.remove':
        return (await records.removeDhcpAgentFromNetwork(command.network_id, command.host))
          ? 'applied'
          : 'unchanged';
      case 'agent.delete':
        return (await agents.delete(command.agent_type, command.host)) ? 'applied' : 'unchanged';
    }
  }
}
