import type { NativeAgentMessage } from '@lifeguard/contracts';
import { RejectedMessageError } from '@lifeguard/runtime';
import type { ProvisioningMetrics } from '../metrics.ts';
import type { AgentCallbacks } from '../ml2/agent-callbacks.ts';

/**
 * Native agent messages (NativeAgentMessage): the same facts as the agent RPCs, for agents that do not
 * speak oslo.messaging. Unlike the RPCs (which ignore unknown ports, as Neutron does), a native
 * message naming a port that does not exist is dead-lettered with the reason, after the known ports
 * of a `dhcp.ready` were completed.
 */
export class NativeAgentHandler {
  constructor(
    private readonly callbacks: AgentCallbacks,
    private readonly metrics: ProvisioningMetrics | null = null,
  ) {}

  /** @throws RejectedMessageError for a message naming an unknown port */
  async handle(message: NativeAgentMessage): Promise<void> {
    const method = `native:${message.type}`;
    try {
      await this.apply(message);
      this.metrics?.rpcRequests.inc({ method, outcome: 'ok' });
    } catch (error) {
      this.metrics?.rpcRequests.inc({
        method,
        outcome: error instanceof RejectedMessageError ? 'rejected' : 'error',
      });
      throw error;
    }
  }

  private async apply(message: NativeAgentMessage): Promise<void> {
    switch (message.type) {
      case 'device.up': {
        const result = await this.callbacks.updateDeviceUp({
          device: message.device,
          host: message.host ?? null,
        });
        if (result.outcome === 'unknown-device' || result.outcome === 'missing') {
          throw new RejectedMessageError(
            `device.up: no port matches device ${JSON.stringify(message.device)}`,
          );
        }
        return;
      }
      case 'device.down': {
        const result = await this.callbacks.updateDeviceDown({
          device: message.device,
          host: message.host ?? null,
        });
        if (result.outcome === 'unknown-device' || result.outcome === 'missing') {
          throw new RejectedMessageError(
            `device.down: no port matches device ${JSON.stringify(message.device)}`,
          );
        }
        return;
      }
      case 'dhcp.ready': {
        const { missing } = await this.callbacks.dhcpReadyOnPorts(message.port_ids);
        if (missing.length > 0) {
          throw new RejectedMessageError(
            `dhcp.ready: ports ${missing.join(', ')} do not exist (the others were completed)`,
          );
        }
        return;
      }
      case 'report_state':
        await this.callbacks.reportState(
          {
            agent_type: message.agent_type,
            binary: message.binary,
            host: message.host,
            topic: message.topic,
            start_flag: message.start_flag,
            configurations: message.configurations,
          },
          null,
        );
        return;
    }
  }
}
