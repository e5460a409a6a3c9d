import { createHash } from 'node:crypto';
import {
  type AgentDevice,
  type AgentState,
  type EventSource,
  PROVISIONING_ENTITY_DHCP,
  PROVISIONING_ENTITY_L2,
  type ReportStateResult,
  type UpdateDeviceDownResult,
  type UpdateDeviceListResult,
} from '@lifeguard/contracts';
import type { RedisClient } from '@lifeguard/runtime';
import type { Logger } from 'pino';
import { RpcMethodError } from '../errors.ts';
import type { ProvisioningMetrics } from '../metrics.ts';
import { type AgentRegistry, parseAgentTime } from '../store/agent-registry.ts';
import type { BlockStore, CompletionOutcome, HandledMarker } from '../store/block-store.ts';
import type { PortStore } from '../store/port-store.ts';
import type { ProvisioningKeys } from '../store/provisioning-keys.ts';

export interface AgentCallbacksOptions {
  redis: RedisClient;
  keys: ProvisioningKeys;
  blocks: BlockStore;
  ports: PortStore;
  agents: AgentRegistry;
  source: EventSource;
  logger: Logger;
  metrics?: ProvisioningMetrics | null;
}

/** A device as the agent sent it, the name part (MAC or id) and the optional PCI slot. */
function deviceName(device: AgentDevice): string {
  return typeof device === 'string' ? device : device[0];
}

/** What `updateDeviceUp` did: the completion's outcome, or `unknown-device` when no port matched. */
export interface DeviceUpResult {
  readonly portId: string | null;
  readonly outcome: CompletionOutcome | 'unknown-device' | 'duplicate';
}

/** What `updateDeviceDown` did, besides the RPC result. */
export interface DeviceDownResult {
  readonly result: UpdateDeviceDownResult;
  readonly portId: string | null;
  readonly outcome: 'missing' | 'not_bound' | 'unchanged' | 'changed' | 'unknown-device';
}

/**
 * What Neutron's server does for the agent RPCs that matter to provisioning (ML2 RpcCallbacks,
 * DhcpRpcCallback, AgentExtRpcCallback; docs/neutron-provisioning-rules.md#agent-topics), independent of how the request arrived
 * (oslo RPC or native JSON).
 */
export class AgentCallbacks {
  constructor(private readonly options: AgentCallbacksOptions) {}

  /**
   * `update_device_up` (docs/neutron-provisioning-rules.md#update_device_up-and-update_device_down): resolves the device to a port; with a `host` the port must
   * be bound there, else blocks are left alone and, for a compute port, Nova gets a direct
   * network-vif-plugged (`port.vif.plugged` event, the live-migration case); otherwise completes the
   * L2 entity. An unknown device is ignored. With a handled marker, the completion and the marker are
   * one atomic step and a duplicate request does nothing (outcome `duplicate`).
   */
  async updateDeviceUp(
    args: { device: AgentDevice; host?: string | null | undefined },
    requestId: string | null = null,
    handled: HandledMarker | null = null,
  ): Promise<DeviceUpResult> {
    const { ports, blocks, logger } = this.options;
    const portId = await ports.resolveDevice(args.device);
    if (!portId) {
      logger.debug(
        { device: args.device, host: args.host },
        'update_device_up for an unknown device; ignored',
      );
      return { portId: null, outcome: 'unknown-device' };
    }
    const { duplicate, results } = await blocks.provisioningCompleteMany(
      [portId],
      'port',
      PROVISIONING_ENTITY_L2,
      {
        requestId,
        host: args.host || null,
        handled,
      },
    );
    return { portId, outcome: duplicate ? 'duplicate' : results[0]!.outcome };
  }

  /**
   * `update_device_down` (docs/neutron-provisioning-rules.md#update_device_up-and-update_device_down): the port goes DOWN unless the agent's host is given and
   * the port is not bound there. `exists` is false only when no host was given and the port does not
   * exist; with a host, a missing port reads as "not bound here" and `exists` stays true, as ML2's.
   */
  async updateDeviceDown(args: {
    device: AgentDevice;
    host?: string | null | undefined;
  }): Promise<DeviceDownResult> {
    const { ports, metrics } = this.options;
    const name = deviceName(args.device);
    const host = args.host || null;
    const portId = await ports.resolveDevice(args.device);
    if (!portId) {
      return { result: { device: name, exists: host !== null }, portId: null, outcome: 'unknown-device' };
    }
    const { outcome, previousStatus } = await ports.markDown(portId, host);
    if (outcome === 'changed') metrics?.statusTransitions.inc({ from: previousStatus ?? '', to: 'DOWN' });
    const exists = outcome !== 'missing' || host !== null;
    return { result: { device: name, exists }, portId, outcome };
  }

  /**
   * `update_device_list` (docs/neutron-provisioning-rules.md#update_device_up-and-update_device_down): `update_device_up` for each of `devices_up`, then
   * `update_device_down` for each of `devices_down`; a device whose call failed goes to the matching
   * failed list. Always returns all four lists.
   * @param handledFor the handled marker of one device's completion (`up:<SHA-1 of the device's
   *   JSON>`), committed with
   *   it: a redelivered request completes only the devices it had not completed yet, and lists the
   *   others as up, as the first time
   */
  async updateDeviceList(
    args: { devices_up: AgentDevice[]; devices_down: AgentDevice[]; host?: string | null | undefined },
    requestId: string | null = null,
    handledFor: (part: string) => HandledMarker | null = () => null,
  ): Promise<UpdateDeviceListResult> {
    const { logger } = this.options;
    const result: UpdateDeviceListResult = {
      devices_up: [],
      failed_devices_up: [],
      devices_down: [],
      failed_devices_down: [],
    };
    const ups = await Promise.allSettled(
      args.devices_up.map((device) =>
        this.updateDeviceUp(
          { device, host: args.host },
          requestId,
          handledFor(`up:${createHash('sha1').update(JSON.stringify(device)).digest('hex')}`),
        ),
      ),
    );
    ups.forEach((outcome, index) => {
      const device = args.devices_up[index]!;
      if (outcome.status === 'fulfilled') result.devices_up.push(device);
      else {
        logger.warn(
          { err: outcome.reason, device },
          'update_device_up failed for a device of update_device_list',
        );
        result.failed_devices_up.push(device);
      }
    });
    const downs = await Promise.allSettled(
      args.devices_down.map((device) => this.updateDeviceDown({ device, host: args.host })),
    );
    downs.forEach((outcome, index) => {
      const device = args.devices_down[index]!;
      if (outcome.status === 'fulfilled') result.devices_down.push(outcome.value.result);
      else {
        logger.warn(
          { err: outcome.reason, device },
          'update_device_down failed for a device of update_device_list',
        );
        result.failed_devices_down.push(device);
      }
    });
    return result;
  }

  /**
   * `dhcp_ready_on_ports` (docs/neutron-provisioning-rules.md#dhcp_ready_on_ports): completes the DHCP entity of each port id (exact ids), all
   * in one atomic step with the request's handled marker when given.
   * @returns the ids of ports that do not exist (Neutron ignores them silently), and whether the
   *   request was a duplicate (its marker existed: nothing was done)
   */
  async dhcpReadyOnPorts(
    portIds: ReadonlyArray<string>,
    requestId: string | null = null,
    handled: HandledMarker | null = null,
  ): Promise<{ missing: string[]; duplicate: boolean }> {
    const unique = [...new Set(portIds)];
    const { duplicate, results } = await this.options.blocks.provisioningCompleteMany(
      unique,
      'port',
      PROVISIONING_ENTITY_DHCP,
      { requestId, handled },
    );
    return { missing: unique.filter((_, index) => results[index]?.outcome === 'missing'), duplicate };
  }

  /**
   * `report_state` (docs/neutron-provisioning-rules.md#report_state).
   * @param time the agent's `time` (`%Y-%m-%dT%H:%M:%S.%f`, UTC), or null for native reports
   * @throws RpcMethodError (ValueError) when `time` does not parse, as Python's strptime would
   */
  async reportState(state: AgentState, time: string | null): Promise<ReportStateResult> {
    let agentTime: number | null = null;
    if (time !== null) {
      agentTime = parseAgentTime(time);
      if (Number.isNaN(agentTime)) {
        throw new RpcMethodError(`time data '${time}' does not match format '%Y-%m-%dT%H:%M:%S.%f'`);
      }
    }
    return this.options.agents.reportState(state, agentTime);
  }
}
