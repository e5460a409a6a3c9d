/** Neutron's provisioning entities (neutron/plugins/ml2 and neutron-lib): DHCP and L2 agents. */
export const PROVISIONING_ENTITY_DHCP = 'DHCP';
export const PROVISIONING_ENTITY_L2 = 'L2';

/** Neutron port statuses (neutron-lib constants). */
export const PORT_STATUSES = ['ACTIVE', 'BUILD', 'DOWN', 'ERROR', 'N/A'] as const;
export type PortStatus = (typeof PORT_STATUSES)[number];

/** device_owner prefix of ports that belong to Nova instances. */
export const COMPUTE_DEVICE_OWNER_PREFIX = 'compute:';

/**
 * Device owners that never get provisioning blocks (Neutron `NO_PBLOCKS_TYPES`): the empty owner and
 * network-owned service ports. Source: docs/neutron-provisioning-rules.md#names-and-constants; bugs 1590845, 1605955, 1930432.
 */
export const NO_PROVISIONING_BLOCK_DEVICE_OWNERS: ReadonlySet<string> = new Set([
  '',
  'network:router_interface_distributed',
  'network:ha_router_replicated_interface',
  'network:router_interface',
  'network:router_gateway',
  'network:router_centralized_snat',
  'network:dhcp',
  'network:floatingip_agent_gateway',
  'network:router_ha_interface',
  'network:floatingip',
]);

/** Agent types as agents report them in `report_state` (`agent_type`). */
export const AGENT_TYPE_DHCP = 'DHCP agent';
export const AGENT_TYPE_OPEN_VSWITCH = 'Open vSwitch agent';
export const AGENT_TYPE_LINUX_BRIDGE = 'Linux bridge agent';
export const AGENT_TYPE_SRIOV = 'NIC Switch agent';
export const AGENT_TYPE_MACVTAP = 'Macvtap agent';

/** Neutron's default `agent_down_time` in seconds: an agent is alive iff its heartbeat is newer. */
export const DEFAULT_AGENT_DOWN_TIME_SECONDS = 75;

/** `binding:vnic_type` values (neutron-lib portbindings). */
export const VNIC_TYPES = [
  'normal',
  'direct',
  'direct-physical',
  'macvtap',
  'baremetal',
  'virtio-forwarder',
  'smart-nic',
  'vdpa',
  'remote-managed',
] as const;
