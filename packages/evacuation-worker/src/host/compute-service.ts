import type { ComputeApi, ComputeService } from '@lifeguard/openstack';

/**
 * The failed host's nova-compute service: by id when Nova lists it (2.53+ UUIDs), else by host name.
 * Null when Nova has no such service.
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

/** `PUT /os-services/{id}` `{"status": "disabled", "disabled_reason": reason}` (forced_down untouched). */
export async function markService(compute: ComputeApi, serviceId: string, reason: string): Promise<void> {
  await compute.updateService(serviceId, { status: 'disabled', disabled_reason: reason });
}

/**
 * `PUT /os-services/{id}` `{"status": "enabled"}` with InstanceHA's 3 attempts and linear back-off
 * (1 s, then 2 s; docs/instance-ha-rules.md#constants).
 * @throws the last attempt's error
 */
export async function enableService(
  compute: ComputeApi,
  serviceId: string,
  backoffMilliseconds = 1000,
): Promise<ComputeService> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await compute.updateService(serviceId, { status: 'enabled' });
    } catch (error) {
      if (attempt >= 3) throw error;
      await new Promise((resolve) => setTimeout(resolve, backoffMilliseconds * attempt));
    }
  }
}
