import { z } from 'zod';
import { eventBase as base } from './event-base.ts';

/**
 * As Neutron's PROVISIONING_COMPLETE callback: the last provisioning block of an object was removed
 * (or a completion arrived while none existed). `entity` is the trigger: the entity that completed.
 * Routing key `provisioning.complete.<objectType>`.
 */
export const ProvisioningCompleteEvent = z.object({
  ...base,
  type: z.literal('provisioning.complete'),
  data: z.object({
    objectType: z.string().min(1),
    objectId: z.string().min(1),
    entity: z.string().min(1),
    /** The completing request's `request_id` (oslo `_context_request_id`), when it carried one. */
    requestId: z.string().nullable().optional(),
  }),
});

/** A port's status changed in the provisioning service's records. */
export const PortStatusChangedEvent = z.object({
  ...base,
  type: z.literal('port.status.changed'),
  data: z.object({
    portId: z.string().min(1),
    previousStatus: z.string(),
    status: z.string(),
    deviceId: z.string(),
    deviceOwner: z.string(),
    host: z.string(),
    /**
     * False when Nova must not hear of this change: a port being live-migrated (`migrating_to` in its
     * binding profile) turned ACTIVE through a completion other than the L2 entity's (docs/neutron-provisioning-rules.md#active-after-provisioning).
     * Absent means true.
     */
    notifyNova: z.boolean().optional(),
  }),
});

/**
 * An L2 agent reported a compute port's device up on a host the port is not bound to (the
 * live-migration destination): blocks and status are left alone, and Nova gets a direct
 * `network-vif-plugged` (docs/neutron-provisioning-rules.md#update_device_up-and-update_device_down).
 */
export const PortVifPluggedEvent = z.object({
  ...base,
  type: z.literal('port.vif.plugged'),
  data: z.object({
    portId: z.string().min(1),
    deviceId: z.string(),
    deviceOwner: z.string(),
    /** The reporting agent's host. */
    host: z.string(),
    /** The host the port is bound to (`binding:host_id`). */
    boundHost: z.string(),
  }),
});
