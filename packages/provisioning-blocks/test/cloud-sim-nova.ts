import { type CloudSim, startCloudSim } from '@lifeguard/cloud-sim';
import { createOpenStackClients, type ServerExternalEvent } from '@lifeguard/openstack';
import type { ExternalEventsApi } from '../src/status/nova-notifier.ts';

/**
 * A simulated cloud (packages/cloud-sim: Nova's `/os-server-external-events` with its 200/207 and
 * per-event 404/422/400 answers) and a NovaClient pointed at it the way an operator configures one
 * (admin token, Compute endpoint), without retries of its own so the notifier's are what is tested.
 * `requests` records the events of each request, to see how the notifier batches them.
 */
export async function startSimulatedNova(): Promise<{
  sim: CloudSim;
  compute: ExternalEventsApi;
  requests: Array<ReadonlyArray<ServerExternalEvent>>;
  /** The path of `POST /os-server-external-events` on the simulated API (for injected faults). */
  eventsPath: string;
}> {
  const sim = await startCloudSim({ hosts: 2, redfishPort: false });
  const entry = sim.cloudEntry() as { auth: { token: string; endpoint: string } };
  const client = createOpenStackClients({
    env: { OS_AUTH_TYPE: 'admin_token', OS_TOKEN: entry.auth.token, OS_ENDPOINT: entry.auth.endpoint },
    searchDirectories: [],
    retry: { attempts: 1 },
  }).compute;
  const requests: Array<ReadonlyArray<ServerExternalEvent>> = [];
  const compute: ExternalEventsApi = {
    createServerExternalEvents(events) {
      requests.push([...events]);
      return client.createServerExternalEvents(events);
    },
  };
  return {
    sim,
    compute,
    requests,
    eventsPath: `${new URL(entry.auth.endpoint).pathname}/os-server-external-events`,
  };
}
