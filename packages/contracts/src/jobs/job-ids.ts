/**
 * Deterministic BullMQ job ids. BullMQ rejects custom ids containing `:` and ids made only of digits,
 * so every part is reduced to `[A-Za-z0-9._-]` and a kind prefix is always present.
 * The same inputs always give the same id, so a redelivered event or a retried step collapses onto
 * the job that already exists (docs/design.md#job-ids).
 */
function part(value: string): string {
  return value.replace(/[^A-Za-z0-9._-]/g, '_');
}

/** `fence.<host>.<incident>`: the one fencing job of a host's incident. */
export const fencingJobId = (host: string, incidentId: string): string =>
  `fence.${part(host)}.${part(incidentId)}`;

/** `power-on.<host>.<incident>`: powering a host back on after its evacuation. */
export const powerOnJobId = (host: string, incidentId: string): string =>
  `power-on.${part(host)}.${part(incidentId)}`;

/** `evacuate-host.<host>.<incident>`: the parent job of a host's evacuation flow. */
export const evacuateHostJobId = (host: string, incidentId: string): string =>
  `evacuate-host.${part(host)}.${part(incidentId)}`;

/** `evacuate-instance.<instance>.<incident>`: one instance's evacuation within an incident. */
export const evacuateInstanceJobId = (instanceId: string, incidentId: string): string =>
  `evacuate-instance.${part(instanceId)}.${part(incidentId)}`;

/** `reenable.<host>.<incident or "none">`: the re-enable of a host after its incident. */
export const reenableJobId = (host: string, incidentId: string | null): string =>
  `reenable.${part(host)}.${part(incidentId ?? 'none')}`;

/**
 * `instance-restart.<instance>.<failure>`: the one restart job of an instance's failure. The failure
 * is the Masakari notification's uuid, or the time lifeguard's instance monitor observed it
 * (`instanceRestartJobId(instanceId, notificationUuid ?? observedAt)`).
 */
export const instanceRestartJobId = (instanceId: string, failureId: string): string =>
  `instance-restart.${part(instanceId)}.${part(failureId)}`;
/** `masakari-notification.<notification uuid>`: the one processing job of an accepted Masakari notification. */
export const masakariNotificationJobId = (notificationUuid: string): string =>
  `masakari-notification.${part(notificationUuid)}`;
