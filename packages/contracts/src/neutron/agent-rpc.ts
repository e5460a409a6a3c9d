import { z } from 'zod';

/**
 * A device as an L2 agent names it: normally the port UUID; Linux-bridge style tap names
 * (`tap` + 11 UUID characters) or a MAC address; since API 1.9 also `[mac, pci_slot]` (SR-IOV).
 * Source: docs/neutron-provisioning-rules.md#update_device_up-and-update_device_down.
 */
export const AgentDevice = z.union([z.string().min(1), z.tuple([z.string(), z.string().nullable()])]);
export type AgentDevice = z.infer<typeof AgentDevice>;

/** `update_device_up(device, agent_id, host)` — L2 agent API 1.9, topic q-plugin, a call. Returns null. */
export const UpdateDeviceUpArgs = z.object({
  device: AgentDevice,
  agent_id: z.string().optional(),
  host: z.string().nullable().optional(),
});
export type UpdateDeviceUpArgs = z.infer<typeof UpdateDeviceUpArgs>;

/** `update_device_down(device, agent_id, host)` — L2 agent API 1.9, a call. */
export const UpdateDeviceDownArgs = UpdateDeviceUpArgs;
export type UpdateDeviceDownArgs = z.infer<typeof UpdateDeviceDownArgs>;

/** Result of `update_device_down`: the device as sent and whether the port was found. */
export const UpdateDeviceDownResult = z.object({ device: AgentDevice, exists: z.boolean() });
export type UpdateDeviceDownResult = z.infer<typeof UpdateDeviceDownResult>;

/**
 * `update_device_list(devices_up, devices_down, agent_id, host, refresh_tunnels)` — API 1.5+.
 * `agent_restarted` is the pre-1.8 name of `refresh_tunnels` and is accepted as an alias.
 */
export const UpdateDeviceListArgs = z.object({
  devices_up: z.array(AgentDevice).default([]),
  devices_down: z.array(AgentDevice).default([]),
  agent_id: z.string().optional(),
  host: z.string().nullable().optional(),
  refresh_tunnels: z.boolean().optional(),
  agent_restarted: z.boolean().optional(),
});
export type UpdateDeviceListArgs = z.infer<typeof UpdateDeviceListArgs>;

/**
 * Result of `update_device_list`: always all four lists (the OVS agent concatenates
 * `failed_devices_up + failed_devices_down`). Source: docs/neutron-provisioning-rules.md#update_device_up-and-update_device_down, fixtures/oslo 04.
 */
export const UpdateDeviceListResult = z.object({
  devices_up: z.array(AgentDevice),
  failed_devices_up: z.array(AgentDevice),
  devices_down: z.array(UpdateDeviceDownResult),
  failed_devices_down: z.array(AgentDevice),
});
export type UpdateDeviceListResult = z.infer<typeof UpdateDeviceListResult>;

/**
 * `dhcp_ready_on_ports(port_ids)` — DHCP agent, prepared at version 1.5, a call; the agent's Python
 * set travels as a JSON array. Returns null; unknown ids are ignored. Source: docs/neutron-provisioning-rules.md#dhcp_ready_on_ports.
 */
export const DhcpReadyOnPortsArgs = z.object({ port_ids: z.array(z.string().min(1)) });
export type DhcpReadyOnPortsArgs = z.infer<typeof DhcpReadyOnPortsArgs>;

/**
 * An agent's state dict in `report_state`. Required by Neutron: `agent_type`, `binary`, `host`,
 * `topic`; the rest is optional and kept as reported. Source: docs/neutron-provisioning-rules.md#report_state.
 */
export const AgentState = z
  .object({
    agent_type: z.string().min(1),
    binary: z.string().min(1),
    host: z.string().min(1),
    topic: z.string(),
    availability_zone: z.string().nullable().optional(),
    start_flag: z.boolean().optional(),
    configurations: z.record(z.string(), z.unknown()).optional(),
    resource_versions: z.record(z.string(), z.unknown()).optional(),
    uuid: z.string().optional(),
  })
  .catchall(z.unknown());
export type AgentState = z.infer<typeof AgentState>;

/** Agent clock format in `report_state`: `%Y-%m-%dT%H:%M:%S.%f`, UTC, no zone suffix. */
export const AgentReportTime = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?$/, 'must be %Y-%m-%dT%H:%M:%S.%f (UTC)');

/**
 * `report_state(agent_state={"agent_state": {...}}, time=...)` — topic q-reports-plugin, API 1.4, call
 * or cast. Note the extra nesting of `agent_state`. Source: docs/neutron-provisioning-rules.md#report_state, fixtures/oslo 06–07.
 */
export const ReportStateArgs = z.object({
  agent_state: z.object({ agent_state: AgentState }),
  time: AgentReportTime,
});
export type ReportStateArgs = z.infer<typeof ReportStateArgs>;

/** Result of `report_state`: "new", "alive", "revived", or null when the report was stale. */
export const ReportStateResult = z.enum(['new', 'alive', 'revived']).nullable();
export type ReportStateResult = z.infer<typeof ReportStateResult>;

/**
 * `has_alive_neutron_server()` — AgentExtRpcCallback 1.2+, called by Neutron's agents at start-up
 * (PluginReportStateAPI, topic q-reports-plugin, version 1.2, no arguments) until it answers; the
 * Open vSwitch agent tolerates only a timeout and exits on any other failure. Returns true.
 */
export const HasAliveNeutronServerArgs = z.object({}).catchall(z.unknown());
export type HasAliveNeutronServerArgs = z.infer<typeof HasAliveNeutronServerArgs>;

/** The agent RPC methods lifeguard serves, by name: argument schema and result schema. */
export const AGENT_RPC_METHODS = {
  update_device_up: { args: UpdateDeviceUpArgs, result: z.null() },
  update_device_down: { args: UpdateDeviceDownArgs, result: UpdateDeviceDownResult },
  update_device_list: { args: UpdateDeviceListArgs, result: UpdateDeviceListResult },
  dhcp_ready_on_ports: { args: DhcpReadyOnPortsArgs, result: z.null() },
  report_state: { args: ReportStateArgs, result: ReportStateResult },
  has_alive_neutron_server: { args: HasAliveNeutronServerArgs, result: z.literal(true) },
} as const;
export type AgentRpcMethod = keyof typeof AGENT_RPC_METHODS;

/**
 * One RPC endpoint as Neutron's server registers it: the version it implements and its methods.
 * oslo's dispatcher picks the first endpoint whose namespace matches and whose version is
 * compatible (same major, requested minor ≤ implemented) and that has the method; if one qualified
 * but none had the method → NoSuchMethod; if none qualified → UnsupportedVersion (docs/oslo-messaging.md#server-rules).
 */
export interface AgentRpcEndpoint {
  readonly name: string;
  readonly version: string;
  readonly namespace: string | null;
  readonly methods: ReadonlyArray<AgentRpcMethod>;
}

/** Endpoints served on topic `q-plugin` (ML2 RpcCallbacks 1.9, DhcpRpcCallback 1.10, AgentExt 1.4). */
export const PLUGIN_TOPIC_ENDPOINTS: ReadonlyArray<AgentRpcEndpoint> = [
  {
    name: 'RpcCallbacks',
    version: '1.9',
    namespace: null,
    methods: ['update_device_up', 'update_device_down', 'update_device_list'],
  },
  { name: 'DhcpRpcCallback', version: '1.10', namespace: null, methods: ['dhcp_ready_on_ports'] },
  {
    name: 'AgentExtRpcCallback',
    version: '1.4',
    namespace: null,
    methods: ['report_state', 'has_alive_neutron_server'],
  },
];

/** Endpoints served on topic `q-reports-plugin` (only AgentExtRpcCallback 1.4: report_state, has_alive_neutron_server). */
export const REPORTS_TOPIC_ENDPOINTS: ReadonlyArray<AgentRpcEndpoint> = [
  {
    name: 'AgentExtRpcCallback',
    version: '1.4',
    namespace: null,
    methods: ['report_state', 'has_alive_neutron_server'],
  },
];
