import { transitionEventId } from '@lifeguard/contracts';
import {
  ACTION_GATES,
  type EvacuabilityCache,
  type ExcludedProjects,
  type GateConfig,
  type GateRun,
  type GateSnapshot,
  type IncidentStore,
  type InstanceHaConfig,
  judgeCapacity,
  readGateSnapshot,
  runGates,
  type ServerExclusionRules,
  selectInstances,
} from '@lifeguard/instance-ha';
import type { ComputeApi } from '@lifeguard/openstack';
import type { EventPublisher, Logger, RedisClient } from '@lifeguard/runtime';
import { FenceDeferredError, FenceRefusedError } from '../errors.ts';

/** What the fence re-check needs. */
export interface FenceRecheckDependencies {
  compute: ComputeApi;
  incidents: IncidentStore;
  events: Pick<EventPublisher, 'publish'>;
  redis: RedisClient;
  keyPrefix: string;
  /**
   * DISABLED, DELTA, THRESHOLD, THRESHOLD_SUSPECT_AGE, TAGGED_AGGREGATES, CHECK_HEARTBEAT..., and for
   * the capacity gate RESERVED_HOSTS and the server exclusions.
   */
  config: GateConfig & ServerExclusionRules & Pick<InstanceHaConfig, 'reservedHosts'>;
  /** SKIP_SERVERS_IN_PROJECT's names looked up in Keystone; absent: its items are project ids only. */
  excludedProjects?: ExcludedProjects;
  /**
   * The evacuable-tag context (TAGGED_IMAGES, TAGGED_FLAVORS): servers the evacuation would leave out
   * for their tags need no room. Absent, or a listing that failed: no server is left out for its tags.
   */
  evacuability?: EvacuabilityCache;
}

/** The moment of a fence job the re-check runs at (logged with the verdict). */
export type FenceMoment = 'before fencing' | 'after the kdump wait';

/**
 * Every fence re-checks the world as it is now, through the gates of a first decision
 * (ACTION_GATES of instance-ha: the host still down by its own reports, no heartbeat, DISABLED,
 * THRESHOLD, `instanceha:max_failures`) and then capacity (judgeCapacity: the host's servers have
 * somewhere to go), whether the job runs for the first time, is retried (by BullMQ or the
 * failed-fence reconciler), was taken over from a dead worker, or resumes after a restart; and once
 * more when a kdump wait ends, before powering off.
 *
 * - every gate passes: returns the run, the fence goes on;
 * - the host came back (`recovered`): the incident is closed with outcome `recovered`,
 *   `host.recovered` is published, and `recovered` is returned: no power action, no Nova change;
 * - a gate that can change holds it back (`defer`): throws FenceDeferredError; for capacity,
 *   `host.capacity.insufficient` is published first (one event per incident and reason);
 * - the host's service is gone (`refuse`): throws FenceRefusedError.
 * @throws the Nova or Redis error when the world cannot be read (the fence does not run blind)
 */
export class FenceRecheck {
  constructor(private readonly deps: FenceRecheckDependencies) {}

  async check(
    fence: { host: string; incidentId: string },
    moment: FenceMoment,
    logger: Logger,
  ): Promise<'proceed' | 'recovered'> {
    const { snapshot, warnings } = await readGateSnapshot({
      compute: this.deps.compute,
      incidents: this.deps.incidents,
      heartbeatTimes: { redis: this.deps.redis, keyPrefix: this.deps.keyPrefix },
      config: this.deps.config,
    });
    for (const warning of warnings) logger.warn({ moment }, warning);
    const run = runGates(ACTION_GATES, snapshot, fence.host);
    logger.info(
      { moment, verdict: run.verdict, gate: run.gate, reason: run.reason, judgements: run.judgements },
      `fence re-check ${moment}: ${run.verdict} (${run.gate}: ${run.reason})`,
    );
    if (run.verdict === 'pass') {
      await this.checkCapacity(fence, snapshot, logger);
      return 'proceed';
    }
    if (run.verdict === 'defer') throw new FenceDeferredError(run.gate, run.reason);
    if (run.verdict === 'refuse') throw new FenceRefusedError(run.gate, run.reason);
    await this.closeRecovered(fence, run, logger);
    return 'recovered';
  }

  /**
   * The capacity gate on the host's servers as Nova lists them now.
   * @throws FenceDeferredError (gate `capacity`) after publishing `host.capacity.insufficient`
   */
  private async checkCapacity(
    fence: { host: string; incidentId: string },
    snapshot: GateSnapshot,
    logger: Logger,
  ): Promise<void> {
    // Nova's listing, Keystone's project names and the evacuable tags are read at the same time.
    const [servers, namedProjects, evacuability] = await Promise.all([
      this.deps.compute.listServers({ host: fence.host, allTenants: true }),
      this.deps.excludedProjects?.get() ?? new Map<string, string>(),
      this.deps.evacuability?.get() ?? null,
    ]);
    const selection = selectInstances(servers, {
      resume: false,
      exclusions: { ...this.deps.config, namedProjects },
      evacuability,
    });
    const judgement = judgeCapacity(snapshot, fence.host, {
      serversToMove: selection.selected,
      reservedHosts: this.deps.config.reservedHosts,
    });
    logger.info(
      { verdict: judgement.verdict, candidates: judgement.candidates.length, servers: judgement.serverCount },
      `capacity: ${judgement.reason}`,
    );
    if (judgement.verdict === 'pass') return;
    await this.deps.events.publish(
      'host.capacity.insufficient',
      {
        host: fence.host,
        incidentId: fence.incidentId,
        serverCount: judgement.serverCount,
        reason: judgement.reason,
        unavailable: [...judgement.unavailable],
      },
      { id: transitionEventId('host.capacity.insufficient', fence.incidentId, judgement.reason) },
    );
    throw new FenceDeferredError(judgement.gate, judgement.reason);
  }

  private async closeRecovered(
    fence: { host: string; incidentId: string },
    run: GateRun,
    logger: Logger,
  ): Promise<void> {
    await this.deps.incidents.close(fence.incidentId, 'recovered');
    logger.warn(
      { gate: run.gate, reason: run.reason },
      'the host came back before it was fenced: incident closed as recovered, the host is left alone',
    );
    await this.deps.events.publish('host.recovered', {
      host: fence.host,
      incidentId: fence.incidentId,
      gate: run.gate,
      reason: run.reason,
      action: 'fence',
    });
  }
}
