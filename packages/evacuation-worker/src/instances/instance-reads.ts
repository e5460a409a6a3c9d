import { type ComputeApi, type Migration, NovaApiError, type Server } from '@lifeguard/openstack';
import {
  describeServer,
  type InstanceDecision,
  latestEvacuation,
  serverHost,
  serverTaskState,
} from './decide.ts';
import type { InstanceEvacuationTarget } from './instance-evacuation-types.ts';

/** True for Nova's 404 (the server, or what was asked about, is gone). */
export const isNotFound = (error: unknown): boolean => error instanceof NovaApiError && error.status === 404;

/** One look at an instance: the server, this incident's newest evacuation migration, and the decision. */
export interface Look {
  readonly server: Server;
  readonly latest: Migration | null;
  readonly decision: InstanceDecision;
}

/** What Nova showed of an instance that has not landed, for the timeout's reason. */
export function notLanded(look: Look): string {
  if (look.decision.kind === 'in-progress') {
    return `its evacuation is still under way (${describeServer(look.server)}, migration ${look.latest?.status ?? 'not listed'})`;
  }
  // An evacuate decision's reason already quotes Nova's fault: said once.
  if (look.decision.kind === 'evacuate')
    return `${look.decision.reason} (${describeServer(look.server, false)})`;
  return `not landed (${describeServer(look.server)})`;
}

/**
 * How the evacuation worker reads an instance from Nova before it decides anything (read before
 * write): the server and this incident's newest evacuation migration of it.
 */
export class InstanceReads {
  /** @param migrationWindowMinutes how far back evacuation migrations are listed, in minutes */
  constructor(
    private readonly compute: ComputeApi,
    private readonly migrationWindowMinutes: number,
  ) {}

  /**
   * This incident's newest evacuation migration, then the server, or 'deleted' (Nova's 404). Both are
   * read on every look, also while the migration is under way: a server its owner deletes during its
   * evacuation is gone from Nova (its migration records with it, or left as they were) and only the
   * server read shows it. Migrations first: a `done` read first means the server read next already
   * shows the destination (Nova moves the instance before it marks the migration done).
   */
  async read(
    target: InstanceEvacuationTarget,
  ): Promise<{ server: Server; latest: Migration | null } | 'deleted'> {
    const latest = latestEvacuation(await this.listEvacuations(target), {
      failedHost: target.failedHost,
      notBefore: target.fencedAt,
    });
    try {
      return { server: await this.compute.getServer(target.instanceId), latest };
    } catch (error) {
      if (isNotFound(error)) return 'deleted';
      throw error;
    }
  }

  /**
   * The first look, before this job sent anything: the server first. Idle (`task_state` null) on the
   * failed host means no evacuation of it can be under way — Nova sets `task_state` in the very
   * request that accepts an evacuate and clears it only when the rebuild ended — so the migration is
   * read only otherwise (one request instead of two for a fresh instance).
   */
  async firstLook(
    target: InstanceEvacuationTarget,
  ): Promise<{ server: Server; latest: Migration | null } | 'deleted'> {
    let server: Server;
    try {
      server = await this.compute.getServer(target.instanceId);
    } catch (error) {
      if (isNotFound(error)) return 'deleted';
      throw error;
    }
    if (serverHost(server) === target.failedHost && serverTaskState(server) === null)
      return { server, latest: null };
    return this.read(target);
  }

  private listEvacuations(
    target: InstanceEvacuationTarget,
    windowMinutes = this.migrationWindowMinutes,
  ): Promise<Migration[]> {
    const since = Math.min(Date.now() - windowMinutes * 60_000, target.fencedAt.getTime() - 60_000);
    return this.compute.listMigrations({
      instanceUuid: target.instanceId,
      migrationType: 'evacuation',
      changesSince: new Date(since).toISOString(),
      limit: 1000,
    });
  }
}
