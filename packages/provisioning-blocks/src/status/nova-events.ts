import { COMPUTE_DEVICE_OWNER_PREFIX, type EventOf } from '@lifeguard/contracts';
import type { ServerExternalEvent } from '@lifeguard/openstack';
import { isUuidLike } from '../store/port-record.ts';

/** Neutron's status → Nova event status map (neutron/notifiers/nova.py). */
const NOVA_EVENT_STATUS: Readonly<Record<string, 'completed' | 'failed'>> = {
  ACTIVE: 'completed',
  ERROR: 'failed',
  DOWN: 'completed',
};

/** Whether Nova is told about a port: a UUID-like `device_id` and a `compute:` owner (docs/neutron-provisioning-rules.md#nova-notification). */
export function isComputePort(deviceId: string, deviceOwner: string): boolean {
  return deviceId !== '' && isUuidLike(deviceId) && deviceOwner.startsWith(COMPUTE_DEVICE_OWNER_PREFIX);
}

/**
 * The Nova external event for a port event, by Neutron's transition rules (docs/neutron-provisioning-rules.md#nova-notification):
 * ACTIVE → DOWN gives `network-vif-unplugged`; unset/DOWN/BUILD → ACTIVE/ERROR gives
 * `network-vif-plugged` (status `completed` for ACTIVE, `failed` for ERROR); a direct
 * `port.vif.plugged` (live migration) gives `network-vif-plugged`/`completed`; everything else, a
 * non-compute port and a change marked `notifyNova: false`, gives nothing. The tag is the port id.
 */
export function novaEventFor(
  event: EventOf<'port.status.changed'> | EventOf<'port.vif.plugged'>,
): ServerExternalEvent | null {
  const { data } = event;
  if (!isComputePort(data.deviceId, data.deviceOwner)) return null;
  if (event.type === 'port.vif.plugged') {
    return { server_uuid: data.deviceId, name: 'network-vif-plugged', status: 'completed', tag: data.portId };
  }
  const { previousStatus, status, notifyNova } = event.data;
  if (notifyNova === false) return null;
  if (previousStatus === 'ACTIVE' && status === 'DOWN') {
    return {
      server_uuid: data.deviceId,
      name: 'network-vif-unplugged',
      status: 'completed',
      tag: data.portId,
    };
  }
  if (['', 'DOWN', 'BUILD'].includes(previousStatus) && (status === 'ACTIVE' || status === 'ERROR')) {
    return {
      server_uuid: data.deviceId,
      name: 'network-vif-plugged',
      status: NOVA_EVENT_STATUS[status],
      tag: data.portId,
    };
  }
  return null;
}
