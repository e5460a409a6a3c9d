import type { InstanceRestartJob } from '@lifeguard/contracts';
import type { IncidentStore } from '@lifeguard/instance-ha';
import { type ComputeApi, NovaApiError, pickComputeService, type Server } from '@lifeguard/openstack';
import type { InstanceRestartFacts, ServerNow } from './policy/instance-restart-decision.ts';
import type { RestartRecords } from './restart-records.ts';

/** What the rule needs, read now, and the server as Nova returned it (null when deleted). */
export interface ReadFacts {
  readonly facts: InstanceRestartFacts;
  readonly server: Server | null;
}

/** The server's fields the rule reads. */
export function serverNow(server: Server): ServerNow {
  return {
    status: server.status,
    vmState: server['OS-EXT-STS:vm_state'] ?? null,
    taskState: server['OS-EXT-STS:task_state'] ?? null,
    host: server['OS-EXT-SRV-ATTR:host'] ?? null,
    metadata: server.metadata,
  };
}

/** `GET /servers/{id}`, or null when Nova answers 404. */
export async function getServerOrNull(compute: ComputeApi, instanceId: string): Promise<Server | null> {
  try {
    return await compute.getServer(instanceId);
  } catch (error) {
    if (error instanceof NovaApiError && error.status === 404) return null;
    throw error;
  }
}

/**
 * Reads the world for one job: the server, its host's nova-compute service and open lifeguard
 * incident, this job's own progress and the instance's other restarts. Nothing is taken from an
 * earlier reading (safety rule 7).
 */
export async function readFacts(
  input: {
    readonly compute: ComputeApi;
    readonly incidents: IncidentStore;
    readonly records: RestartRecords;
  },
  job: InstanceRestartJob,
  jobId: string,
  now: Date,
): Promise<ReadFacts> {
  const server = await getServerOrNull(input.compute, job.instanceId);
  const host = server?.['OS-EXT-SRV-ATTR:host'] ?? job.host;
  const [services, incident, ownProgress, otherRestartsBeganAt] = await Promise.all([
    server === null ? Promise.resolve([]) : input.compute.listServices({ binary: 'nova-compute', host }),
    input.incidents.getOpenIncident(host),
    input.records.progress(jobId),
    input.records.otherRestarts(job.instanceId, jobId),
  ]);
  const service = pickComputeService(services, host, null);
  return {
    server,
    facts: {
      failure: job.failure,
      reportedHost: job.host,
      observedAt: new Date(job.observedAt),
      now,
      server: server === null ? null : serverNow(server),
      computeService:
        service === null
          ? null
          : { state: service.state ?? 'unknown', forcedDown: service.forced_down ?? false },
      openIncidentId: incident?.id ?? null,
      ownProgress,
      otherRestartsBeganAt,
    },
  };
}
