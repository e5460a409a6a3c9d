import { CloudEntry, createOpenStackClients } from '@lifeguard/openstack';
import { type ContractTarget, rawCall } from '../../../openstack/test/support/contract-target.ts';
import { type CloudSim, type CloudSimOptions, startCloudSim } from '../../src/index.ts';

/** A cloud-sim started for one test file, as a contract target; the client is configured from its clouds.yaml entry. */
export async function cloudSimTarget(
  options: CloudSimOptions & { pageSize?: number } = {},
): Promise<ContractTarget & { sim: CloudSim }> {
  const sim = await startCloudSim({
    hosts: 3,
    model: {
      reportIntervalSeconds: 2,
      serviceDownTimeSeconds: 10,
      evacuation: { acceptMilliseconds: 0, rebuildMilliseconds: 300 },
    },
    ...options,
  });
  const entry = CloudEntry.parse(sim.cloudEntry());
  const clients = createOpenStackClients({
    env: {
      OS_AUTH_TYPE: 'admin_token',
      OS_TOKEN: String(entry.auth.token),
      OS_ENDPOINT: String(entry.auth.endpoint),
      OS_IMAGE_ENDPOINT_OVERRIDE: String(entry.image_endpoint_override),
    },
    searchDirectories: [],
    retry: { attempts: 3, baseDelayMilliseconds: 50 },
    ...(options.pageSize === undefined ? {} : { pageSize: options.pageSize }),
  });
  const headers = { 'x-auth-token': 'admin:admin' };
  return {
    sim,
    label: 'cloud-sim',
    clients,
    hosts: [...sim.model.hosts.keys()],
    imageId: [...sim.model.images.keys()][0]!,
    flavorId: '1',
    nova: (method, path, body, microversion = '2.74') =>
      rawCall(
        `${sim.urls.compute}${path}`,
        method,
        { ...headers, 'x-openstack-nova-api-version': microversion },
        body,
      ),
    glance: (method, path, body, contentType) =>
      rawCall(`${sim.urls.image}${path}`, method, headers, body, contentType),
    killCompute: async (host) => sim.killHost(host),
    startCompute: async (host) => {
      if (!sim.model.host(host).computeRunning) sim.reviveHost(host);
    },
    close: () => sim.close(),
  };
}
