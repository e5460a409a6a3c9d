import type { ComputeApi, ComputeService } from '@lifeguard/openstack';

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
