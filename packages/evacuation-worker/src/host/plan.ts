import {
  type EvacuabilityCache,
  type ExcludedProjects,
  type InstanceHaConfig,
  type InstanceSelection,
  selectInstances,
} from '@lifeguard/instance-ha';
import type { ComputeApi, Server } from '@lifeguard/openstack';
import type { Logger } from 'pino';
import { orchestratedPhases, singlePhase } from '../instances/phases.ts';
import { intendedStatus } from '../instances/settle.ts';
import type { EvacuationPolicy } from '../policy/evacuation-policy.ts';
import type { PlannedInstance } from './host-state.ts';

/** The host's instances to evacuate, with their phases, and what was left out. */
export interface HostPlan {
  readonly instances: PlannedInstance[];
  readonly phaseCount: number;
  readonly selection: InstanceSelection;
}

/**
 * The servers evacuated away from `host` since `since` (ISO 8601) that the host's listing no longer
 * shows (Nova moves a server to its destination when the rebuild starts): on a resume, an evacuation
 * under way when the previous run's memory was lost is followed and reported, not forgotten
 * (docs/failure-modes.md#redis-restarted-empty). A server deleted since is left out.
 */
async function serversEvacuatedAway(
  compute: ComputeApi,
  host: string,
  since: string,
  listed: ReadonlyArray<Server>,
): Promise<Server[]> {
  const known = new Set(listed.map((server) => server.id));
  const migrations = await compute.listMigrations({
    sourceCompute: host,
    migrationType: 'evacuation',
    changesSince: since,
  });
  const found: Server[] = [];
  for (const id of new Set(migrations.map((migration) => migration.instance_uuid))) {
    if (known.has(id)) continue;
    const server = await compute.getServer(id).catch((error: unknown) => {
      if ((error as { status?: number }).status === 404) return null;
      throw error;
    });
    if (server) found.push(server);
  }
  return found;
}

/**
 * Lists the failed host's servers (`GET /servers/detail?host=&all_tenants=1`, every page), selects
 * the evacuable ones (selectInstances) and splits them into the policy's phases: one phase
 * (traditional, smart) or ORCHESTRATED_RESTART's restart-priority phases
 * (docs/instance-ha-rules.md#evacuation-policy). SKIP_SERVERS_IN_PROJECT's names are looked up in
 * Keystone (`lookups.excludedProjects`). `serversRead` is that listing when the caller started it.
 * On a resume, `evacuatedSince` (the host's last report to Nova) adds the servers evacuated away from
 * it since then (serversEvacuatedAway).
 */
export async function planHostEvacuation(
  compute: ComputeApi,
  lookups: { evacuability: EvacuabilityCache; excludedProjects: ExcludedProjects | null },
  config: InstanceHaConfig,
  policy: Pick<EvacuationPolicy, 'phases'>,
  host: string,
  resume: boolean,
  logger: Logger,
  serversRead: Promise<Server[]> = compute.listServers({ host, allTenants: true }),
  evacuatedSince: string | null = null,
): Promise<HostPlan> {
  const servers = await serversRead;
  if (resume && evacuatedSince !== null)
    servers.push(...(await serversEvacuatedAway(compute, host, evacuatedSince, servers)));
  const needsTags = config.taggedImages || config.taggedFlavors;
  const evacuability = needsTags ? await lookups.evacuability.get() : null;
  const namedProjects = (await lookups.excludedProjects?.get()) ?? new Map<string, string>();
  const selection = selectInstances(servers, {
    resume,
    exclusions: { ...config, namedProjects },
    evacuability,
  });
  let phases = singlePhase(selection.selected);
  if (policy.phases === 'restart-priority') {
    const ordered = orchestratedPhases(selection.selected);
    if (!ordered.tagged && selection.selected.length > 0) {
      logger.warn(
        { host },
        'ORCHESTRATED_RESTART is on but no instance has instanceha:restart_group or instanceha:restart_priority; every instance is its own phase',
      );
    }
    phases = ordered.phases;
  }
  const instances: PlannedInstance[] = phases.flatMap((phase, index) =>
    phase.servers.map((server) => ({
      id: server.id,
      name: server.name,
      status: intendedStatus(server),
      phase: index,
      priority: phase.priority,
    })),
  );
  for (const server of selection.selected) {
    const intended = intendedStatus(server);
    if (intended === server.status) continue;
    logger.warn(
      { host, instanceId: server.id, status: server.status, taskState: server['OS-EXT-STS:task_state'] },
      `Instance ${server.id} (${server.name}) of ${host} is ${server.status} with task_state ${server['OS-EXT-STS:task_state']}: a power action asked for after its host died; it will be ${intended} once evacuated`,
    );
  }
  return { instances, phaseCount: phases.length, selection };
}
