import {
  categoriseServices,
  type IncidentStore,
  type OpenIncidentSummary,
  planRebuild,
  type RebuildPlan,
} from '@lifeguard/instance-ha';
import type { DeploymentGeneration, GenerationMarker, Logger } from '@lifeguard/runtime';
import type { EventSink } from '../event-sink.ts';
import { evidenceOf } from '../host-down-evidence.ts';
import type { NodeMonitorMetrics } from '../metrics.ts';
import { NotLeaderError } from '../not-leader-error.ts';

/** What Redis held that a lost memory takes with it (logged when the loss is found). */
export const LOST_WITH_REDIS: ReadonlyArray<string> = [
  'incidents and their fence records',
  'fence, evacuation and re-enable jobs (BullMQ)',
  'the leader lease and the fencing tokens seen',
  'heartbeat and fence_kdump packet times',
  'provisioning blocks, ports and agents',
  'the event journal',
];

export interface RedisMemoryWatchDependencies {
  readonly generation: DeploymentGeneration;
  readonly incidents: IncidentStore;
  readonly events: EventSink;
  readonly metrics: NodeMonitorMetrics;
  readonly logger: Logger;
  /** DELTA, seconds (the categorisation the rebuild plan reads needs it). */
  readonly deltaSeconds: number;
  /**
   * Takes or extends the leader lease now (LeaderLease.tryAcquire): the fencing token the lease holds
   * in Redis, or null when this process does not hold it.
   */
  readonly reaffirmLeadership: () => Promise<number | null>;
}

/** The incidents a rebuild re-opened. */
export interface RebuildReport {
  readonly marker: GenerationMarker;
  readonly restored: ReadonlyArray<{ host: string; incidentId: string }>;
  readonly plan: RebuildPlan;
}

/**
 * Notices that Redis lost its memory and rebuilds what it can from Nova, at the start of every poll
 * cycle of the leading node monitor (docs/failure-modes.md#redis-restarted-empty):
 *
 * 1. reads the deployment generation marker (DeploymentGeneration.observe: written on a first start,
 *    written again with `rebuild: pending` when the generation this monitor saw is gone);
 * 2. on a loss: logs at error what was lost, counts `lifeguard_redis_memory_lost_total`;
 * 3. while the rebuild is pending: takes the leader lease again (Redis lost it too, with the token
 *    counter the fencing workers check tokens against) and rebuilds under the token it holds now, or
 *    not at all when another replica took it (NotLeaderError); re-opens, under the marker's incident id, the incident of every
 *    host that carries lifeguard's in-progress `disabled_reason` marker and has no incident (as a
 *    resume with no fence record, so the fence job re-checks the world and fences again,
 *    docs/safety-rules.md#redis-memory-lost), publishes `redis.memory.lost`, and marks the rebuild
 *    done. Until then the fencing worker refuses every fence.
 * @throws the Redis error when the marker or the incidents cannot be read or written (the cycle
 *   fails and is retried; nothing is published)
 */
export class RedisMemoryWatch {
  constructor(private readonly deps: RedisMemoryWatchDependencies) {}

  /** Runs steps 1–3 for one cycle; returns the rebuild's report, or null when nothing was rebuilt. */
  async check(services: ReadonlyArray<unknown>, now: Date, token: number): Promise<RebuildReport | null> {
    const { generation, logger, metrics } = this.deps;
    const { verdict, marker } = await generation.observe(now);
    if (verdict.kind === 'memory-lost') {
      metrics.redisMemoryLost.inc();
      logger.error(
        {
          alert: true,
          lostGenerationId: verdict.lostGenerationId,
          generationId: marker.id,
          lost: LOST_WITH_REDIS,
        },
        `ALERT: Redis lost its memory (generation ${verdict.lostGenerationId} is gone): ${LOST_WITH_REDIS.join('; ')}. No fence runs until the incidents are rebuilt from Nova's disabled_reason markers`,
      );
    } else if (verdict.kind === 'first-start') {
      logger.info({ generationId: marker.id }, 'deployment generation marker written (first start)');
    }
    if (marker.rebuild !== 'pending') return null;
    // The token this cycle started with was issued by a lease Redis no longer holds: an incident or an
    // event under it would be refused by every fencing worker ("never issued by the leader lease").
    const held = await this.deps.reaffirmLeadership();
    if (held === null) throw new NotLeaderError();
    if (held !== token) {
      logger.warn({ fencingToken: held, previousToken: token }, 'leader lease taken again with a new token');
    }
    return this.rebuild(marker, services, now, held);
  }

  private async rebuild(
    marker: GenerationMarker,
    services: ReadonlyArray<unknown>,
    now: Date,
    token: number,
  ): Promise<RebuildReport> {
    const { incidents, logger, metrics, generation } = this.deps;
    const open = await incidents.openByShortHost();
    const summaries = new Map<string, OpenIncidentSummary>(
      [...open].map(([host, incident]) => [host, { id: incident.id, state: incident.state }]),
    );
    const plan = planRebuild(
      categoriseServices(services, { now, deltaSeconds: this.deps.deltaSeconds, openIncidents: summaries }),
    );
    const restored: Array<{ host: string; incidentId: string }> = [];
    for (const { service, incidentId } of plan.restore) {
      const { incident } = await incidents.openIncident({
        host: service.host,
        serviceId: service.id,
        fencingToken: token,
        kdumpFenced: false,
        resume: true,
        evidence: evidenceOf(service),
        ...(incidentId ? { incidentId } : {}),
        now,
      });
      metrics.incidentsRestored.inc();
      restored.push({ host: incident.host, incidentId: incident.id });
    }
    const awaitingReenable = plan.awaitingReenable.map((service) => service.host);
    const awaitingOperator = plan.awaitingOperator.map((service) => service.host);
    logger.error(
      { alert: true, generationId: marker.id, restored, awaitingReenable, awaitingOperator },
      `Redis memory rebuilt from Nova: ${restored.length} incident(s) re-opened from lifeguard's markers (each is re-checked and fenced again before evacuation), ${awaitingReenable.length} host(s) left to the re-enable rules, ${awaitingOperator.length} waiting for an operator`,
    );
    await this.deps.events
      .publish('redis.memory.lost', {
        lostGenerationId: marker.lostGenerationId ?? 'unknown',
        generationId: marker.id,
        restoredIncidents: restored,
        awaitingReenable,
        awaitingOperator,
      })
      .catch((error: unknown) => logger.error({ err: error }, 'redis.memory.lost not published'));
    await generation.markRebuilt(marker);
    return { marker, restored, plan };
  }
}
