import {
  AGENT_TYPE_LINUX_BRIDGE,
  AGENT_TYPE_MACVTAP,
  AGENT_TYPE_OPEN_VSWITCH,
  AGENT_TYPE_SRIOV,
  NO_PROVISIONING_BLOCK_DEVICE_OWNERS,
  type Port,
  type Subnet,
} from '@lifeguard/contracts';

/** An agent-based ML2 mechanism driver: its agent type and the `binding:vnic_type`s it binds. */
export interface MechanismDriver {
  readonly name: string;
  readonly agentType: string;
  readonly supportedVnicTypes: ReadonlySet<string>;
}

/**
 * Neutron's agent-based mechanism drivers (neutron/plugins/ml2/drivers): Open vSwitch binds normal,
 * direct (hardware offload), smart-nic and vdpa; SR-IOV direct, macvtap, direct-physical and
 * accelerator-direct; Linux bridge (removed from current Neutron, still deployed) and macvtap bind
 * normal only.
 */
export const MECHANISM_DRIVERS: Readonly<Record<string, MechanismDriver>> = {
  openvswitch: {
    name: 'openvswitch',
    agentType: AGENT_TYPE_OPEN_VSWITCH,
    supportedVnicTypes: new Set(['normal', 'direct', 'smart-nic', 'vdpa']),
  },
  linuxbridge: {
    name: 'linuxbridge',
    agentType: AGENT_TYPE_LINUX_BRIDGE,
    supportedVnicTypes: new Set(['normal']),
  },
  sriovnicswitch: {
    name: 'sriovnicswitch',
    agentType: AGENT_TYPE_SRIOV,
    supportedVnicTypes: new Set(['direct', 'macvtap', 'direct-physical', 'accelerator-direct']),
  },
  macvtap: { name: 'macvtap', agentType: AGENT_TYPE_MACVTAP, supportedVnicTypes: new Set(['normal']) },
};

/** True for ports that never get provisioning blocks (Neutron's NO_PBLOCKS_TYPES, docs/neutron-provisioning-rules.md#names-and-constants). */
export function isNoBlockDeviceOwner(deviceOwner: string): boolean {
  return NO_PROVISIONING_BLOCK_DEVICE_OWNERS.has(deviceOwner);
}

/** What the DHCP rule decides for a port: add the DHCP block, clear a stale one, or leave blocks alone. */
export type DhcpBlockDecision = 'add' | 'remove' | 'none';

/**
 * ML2's DHCP provisioning rule (docs/neutron-provisioning-rules.md#dhcp-block-rule): nothing when traditional DHCP is off or the owner
 * never gets blocks; otherwise the DHCP block is added when one of the port's `fixed_ips` subnets has
 * `enable_dhcp` and at least one DHCP agent hosts the network (whatever its liveness), and cleared
 * otherwise (so the port never waits for a DHCP agent that will not report).
 * @param subnets the port's fixed_ips subnets that exist
 */
export function dhcpBlockDecision(
  port: Port,
  facts: { enableTraditionalDhcp: boolean; subnets: ReadonlyArray<Subnet>; networkHasDhcpAgent: boolean },
): DhcpBlockDecision {
  if (!facts.enableTraditionalDhcp || isNoBlockDeviceOwner(port.device_owner)) return 'none';
  const portSubnets = new Set(port.fixed_ips.map((fixedIp) => fixedIp.subnet_id));
  const dhcpSubnet = facts.subnets.some((subnet) => portSubnets.has(subnet.id) && subnet.enable_dhcp);
  return dhcpSubnet && facts.networkHasDhcpAgent ? 'add' : 'remove';
}

/**
 * The agent mechanism drivers' L2 rule (docs/neutron-provisioning-rules.md#l2-block-rule): the port has a host, is not ACTIVE, its owner
 * gets blocks, and some configured driver supports its `binding:vnic_type` and has an agent of its
 * type registered on that host (liveness is not considered here).
 * @param agentTypesOnHost agent types registered on the port's host
 */
export function needsL2Block(
  port: Port,
  drivers: ReadonlyArray<MechanismDriver>,
  agentTypesOnHost: ReadonlySet<string>,
): boolean {
  if (!port['binding:host_id'] || port.status === 'ACTIVE') return false;
  if (isNoBlockDeviceOwner(port.device_owner)) return false;
  const vnicType = port['binding:vnic_type'] || 'normal';
  return drivers.some(
    (driver) => driver.supportedVnicTypes.has(vnicType) && agentTypesOnHost.has(driver.agentType),
  );
}

const sameJson = (left: unknown, right: unknown) => JSON.stringify(left) === JSON.stringify(right);

/**
 * Whether an update changes the binding request (`binding:host_id`, `binding:vnic_type` or
 * `binding:profile`): ML2 then clears the binding and forces the port DOWN (docs/neutron-provisioning-rules.md#port-status-transitions).
 */
export function bindingRequestChanged(original: Port, updated: Port): boolean {
  return (
    original['binding:host_id'] !== updated['binding:host_id'] ||
    original['binding:vnic_type'] !== updated['binding:vnic_type'] ||
    !sameJson(original['binding:profile'], updated['binding:profile'])
  );
}

/** Whether an update changes `fixed_ips` or `mac_address`: only then is the DHCP rule re-run (bug 1714655). */
export function addressesChanged(original: Port, updated: Port): boolean {
  return original.mac_address !== updated.mac_address || !sameJson(original.fixed_ips, updated.fixed_ips);
}
