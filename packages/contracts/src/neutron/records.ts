import { z } from 'zod';
import { AgentDevice } from './agent-rpc.ts';
import { PORT_STATUSES } from './constants.ts';

const ResourceId = z.string().min(1).max(255);

/** One entry of a port's `fixed_ips`: the subnet and, once allocated, the address. */
export const FixedIp = z.object({
  subnet_id: ResourceId,
  ip_address: z.string().optional(),
});
export type FixedIp = z.infer<typeof FixedIp>;

/**
 * A Neutron port as the provisioning service keeps it (the subset ML2's provisioning rules read).
 * Field names are Neutron's API names, including `binding:host_id`, `binding:vnic_type`,
 * `binding:vif_type` and `binding:profile`.
 */
export const Port = z.object({
  id: ResourceId,
  network_id: ResourceId,
  mac_address: z.string().default(''),
  admin_state_up: z.boolean().default(true),
  status: z.enum(PORT_STATUSES).default('DOWN'),
  device_owner: z.string().default(''),
  device_id: z.string().default(''),
  fixed_ips: z.array(FixedIp).default([]),
  'binding:host_id': z.string().default(''),
  'binding:vnic_type': z.string().default('normal'),
  /** `unbound`, `binding_failed`, or the bound VIF type (`ovs`, `bridge`, ...). */
  'binding:vif_type': z.string().default('unbound'),
  'binding:profile': z.record(z.string(), z.unknown()).default({}),
});
export type Port = z.output<typeof Port>;

/** A Neutron network (the fields provisioning needs). */
export const Network = z.object({
  id: ResourceId,
  name: z.string().default(''),
  admin_state_up: z.boolean().default(true),
});
export type Network = z.output<typeof Network>;

/** A Neutron subnet (`enable_dhcp` decides the DHCP provisioning block). */
export const Subnet = z.object({
  id: ResourceId,
  network_id: ResourceId,
  cidr: z.string().default(''),
  enable_dhcp: z.boolean().default(true),
});
export type Subnet = z.output<typeof Subnet>;

/**
 * An agent record, kept from `report_state` heartbeats and keyed by `(agent_type, host)` as Neutron
 * does. Timestamps are ISO 8601 UTC strings; `heartbeat_timestamp` is the **server's** time of the last
 * report (docs/neutron-provisioning-rules.md#report_state).
 */
export const Agent = z.object({
  id: ResourceId,
  agent_type: z.string().min(1),
  binary: z.string().min(1),
  host: z.string().min(1),
  topic: z.string(),
  availability_zone: z.string().nullable().default(null),
  admin_state_up: z.boolean().default(true),
  configurations: z.record(z.string(), z.unknown()).default({}),
  resource_versions: z.record(z.string(), z.unknown()).default({}),
  created_at: z.iso.datetime({ offset: true }),
  started_at: z.iso.datetime({ offset: true }),
  heartbeat_timestamp: z.iso.datetime({ offset: true }),
});
export type Agent = z.output<typeof Agent>;

/**
 * Native commands that create, update and delete the records the provisioning service keeps,
 * published as JSON to the commands exchange (routing key = `command`). Updates carry the port's new
 * fields; omitted fields keep their stored value.
 */
export const ProvisioningCommand = z.discriminatedUnion('command', [
  z.object({ command: z.literal('network.create'), network: Network }),
  z.object({ command: z.literal('network.delete'), network_id: ResourceId }),
  z.object({ command: z.literal('subnet.create'), subnet: Subnet }),
  z.object({
    command: z.literal('subnet.update'),
    subnet_id: ResourceId,
    changes: Subnet.omit({ id: true, network_id: true }).partial(),
  }),
  z.object({ command: z.literal('subnet.delete'), subnet_id: ResourceId }),
  z.object({ command: z.literal('port.create'), port: Port }),
  z.object({
    command: z.literal('port.update'),
    port_id: ResourceId,
    changes: Port.omit({ id: true }).partial(),
  }),
  z.object({ command: z.literal('port.delete'), port_id: ResourceId }),
  /** Bind (schedule) a DHCP agent, by its host, to a network: the agent now "hosts" the network. */
  z.object({ command: z.literal('network.dhcp_agent.add'), network_id: ResourceId, host: z.string().min(1) }),
  z.object({
    command: z.literal('network.dhcp_agent.remove'),
    network_id: ResourceId,
    host: z.string().min(1),
  }),
  z.object({ command: z.literal('agent.delete'), agent_type: z.string().min(1), host: z.string().min(1) }),
]);
export type ProvisioningCommand = z.output<typeof ProvisioningCommand>;
export type ProvisioningCommandName = ProvisioningCommand['command'];

/**
 * Native agent messages, for agents that do not speak oslo.messaging: the same facts as the RPC
 * methods `update_device_up`, `update_device_down`, `dhcp_ready_on_ports` and `report_state`.
 * Published as JSON to the native agents exchange (routing key = `type`).
 */
export const NativeAgentMessage = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('device.up'),
    device: AgentDevice,
    host: z.string().min(1).optional(),
    agent_id: z.string().optional(),
  }),
  z.object({
    type: z.literal('device.down'),
    device: AgentDevice,
    host: z.string().min(1).optional(),
    agent_id: z.string().optional(),
  }),
  z.object({ type: z.literal('dhcp.ready'), port_ids: z.array(z.string().min(1)).min(1) }),
  z.object({
    type: z.literal('report_state'),
    agent_type: z.string().min(1),
    binary: z.string().min(1),
    host: z.string().min(1),
    topic: z.string().default('N/A'),
    start_flag: z.boolean().default(false),
    configurations: z.record(z.string(), z.unknown()).default({}),
  }),
]);
export type NativeAgentMessage = z.output<typeof NativeAgentMessage>;
