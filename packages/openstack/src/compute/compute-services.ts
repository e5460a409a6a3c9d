import type { ComputeApi } from './compute-api.ts';
import type { ComputeService } from './resources.ts';

/**
 * A host's nova-compute service (`GET /os-services?binary=nova-compute&host=<host>`): by id when Nova
 * lists it (2.53+ UUIDs), else by host name. Null when Nova has no such service.
 * @throws NovaApiError (or another OpenStackApiError) when the listing fails
 */
export async function findComputeService(
  compute: ComputeApi,
  host: string,
  serviceId: string | null,
): Promise<ComputeService | null> {
  return pickComputeService(await compute.listServices({ binary: 'nova-compute', host }), host, serviceId);
}

/** The host's nova-compute service in a listing: by id when given and listed, else by host name; or null. */
export function pickComputeService(
  services: ReadonlyArray<ComputeService>,
  host: string,
  serviceId: string | null,
): ComputeService | null {
  return (
    services.find((service) => serviceId !== null && service.id === serviceId) ??
    services.find((service) => service.host === host) ??
    null
  );
}

/**
 * `PUT /os-services/{id}` `{"status": "disabled", "disabled_reason": reason}` (forced_down untouched).
 * @throws NovaApiError (or another OpenStackApiError) when Nova refuses or cannot be reached
 */
export async function markService(compute: ComputeApi, serviceId: string, reason: string): Promise<void> {
  await compute.updateService(serviceId, { status: 'disabled', disabled_reason: reason });
}
