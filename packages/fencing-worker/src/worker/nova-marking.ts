import { formatDisabledReason, parseDisabledReason } from '@lifeguard/instance-ha';
import type { ComputeApi, ComputeService } from '@lifeguard/openstack';
import type { Logger } from '@lifeguard/runtime';

/** What marking a fenced host's compute service did. */
export interface MarkingOutcome {
  /** The `disabled_reason` the service carries now. */
  disabledReason: string;
  /** The disable PUT was sent (false: an evacuation marker of this incident, or InstanceHA's, was there). */
  disabled: boolean;
}

/**
 * Marks a fenced host's nova-compute service as InstanceHA does after fencing (docs/instance-ha-rules.md#host-job step 2,
 * 1.12): first `PUT /os-services/{id} {"forced_down": true}`, and only once that succeeded
 * `{"status": "disabled", "disabled_reason": "lifeguard evacuation[ (kdump)]: <ts> incident=<id>"}`.
 * Two requests: the service as the first PUT returns it (microversion 2.53+) tells whether the
 * second is needed. Safe to repeat: forcing a service down again changes nothing in Nova, and an
 * evacuation marker already written for this incident — or InstanceHA's own `instanceha evacuation`
 * marker, when an operator switched over mid-incident — is kept with its original timestamp.
 * @throws NovaApiError / EndpointUnreachableError from the client (404 when the service is gone)
 */
export async function markServiceFenced(
  compute: ComputeApi,
  logger: Logger,
  target: { host: string; serviceId: string; incidentId: string; kdumpFenced: boolean },
): Promise<MarkingOutcome> {
  const current: ComputeService = await compute.updateService(target.serviceId, { forced_down: true });
  const existing = current.disabled_reason ?? null;
  const marker = parseDisabledReason(existing);
  const keep =
    current.status === 'disabled' &&
    existing !== null &&
    marker.kind === 'evacuating' &&
    (marker.origin === 'instanceha' ||
      (marker.origin === 'lifeguard' && marker.incidentId === target.incidentId));
  if (keep) {
    logger.info(
      { host: target.host, serviceId: target.serviceId, disabledReason: existing },
      'compute service already disabled with an evacuation marker; kept',
    );
    return { disabledReason: existing, disabled: false };
  }
  const reason = formatDisabledReason({
    kind: 'evacuating',
    kdump: target.kdumpFenced,
    incidentId: target.incidentId,
  });
  await compute.updateService(target.serviceId, { status: 'disabled', disabled_reason: reason });
  return { disabledReason: reason, disabled: true };
}
