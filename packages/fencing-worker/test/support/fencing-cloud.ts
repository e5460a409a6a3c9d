import { type CloudSim, startCloudSim } from '@lifeguard/cloud-sim';
import { CloudEntry, createOpenStackClients } from '@lifeguard/openstack';

/**
 * cloud-sim with `hosts` compute hosts that report every second, are down after 3 s of silence and
 * boot servers at once, with a Compute API client on its admin token: the cloud the fencing worker's
 * cloud-sim tests fence in.
 */
export async function startFencingCloud(
  hosts: number,
): Promise<{ sim: CloudSim; compute: ReturnType<typeof createOpenStackClients>['compute'] }> {
  const sim = await startCloudSim({
    hosts,
    model: { reportIntervalSeconds: 1, serviceDownTimeSeconds: 3, bootMilliseconds: 0 },
  });
  const entry = CloudEntry.parse(sim.cloudEntry());
  const { compute } = createOpenStackClients({
    env: {
      OS_AUTH_TYPE: 'admin_token',
      OS_TOKEN: String(entry.auth.token),
      OS_ENDPOINT: String(entry.auth.endpoint),
    },
    searchDirectories: [],
  });
  return { sim, compute };
}
