import type { Aggregate, ComputeApi, ComputeService } from '@lifeguard/openstack';
import type { RedisClient } from '@lifeguard/runtime';
import { redisKey } from '@lifeguard/runtime';
import { readHostAgentEvidence } from '../host-agents/host-agent-evidence-reader.ts';
import type { IncidentStore } from '../incidents/incident-store.ts';
import { MonitorReportStore } from '../monitor-reports/monitor-report-store.ts';
import { type ServiceView, toServiceView } from '../services/categorise.ts';
import { LatestHostTimes } from '../services/latest-host-times.ts';
import type { GateConfig, GateSnapshot } from './gate-snapshot.ts';

/**
 * The Redis hash of the last heartbeat per short hostname (epoch milliseconds), written by every
 * node-monitor replica's heartbeat listener: `<prefix>:node-monitor:heartbeat:last`.
 */
export function heartbeatTimesKey(keyPrefix: string): string {
  return redisKey(keyPrefix, 'node-monitor', 'heartbeat', 'last');
}

export interface GateSnapshotSources {
  readonly compute: ComputeApi;
  readonly incidents: IncidentStore;
  /** Where the node monitors keep the last heartbeats; without it the heartbeat gate has no data. */
  readonly heartbeatTimes: { readonly redis: RedisClient; readonly keyPrefix: string } | null;
  readonly config: GateConfig;
}

/** A snapshot together with the problems met while reading it (reads that fell back, e.g. aggregates). */
export interface ReadGateSnapshot {
  readonly snapshot: GateSnapshot;
  /** The `nova-compute` records as Nova sent them. */
  readonly records: ReadonlyArray<ComputeService>;
  readonly warnings: ReadonlyArray<string>;
}

/**
 * Reads the world once for the gates: every `nova-compute` service (`GET /os-services`), the
 * aggregates with TAGGED_AGGREGATES (a failed list leaves them out, with a warning), the open
 * incidents, and with CHECK_HEARTBEAT (and `heartbeatTimes`) the last heartbeats, with
 * HEARTBEAT_DETECTION what the host agents said, and the host monitors' admitted reports. The snapshot's time is taken after Nova
 * answered, so that report ages are not understated.
 * @throws the Nova or Redis error when the services or the incidents cannot be read
 */
export async function readGateSnapshot(sources: GateSnapshotSources): Promise<ReadGateSnapshot> {
  const warnings: string[] = [];
  const [records, aggregates, openIncidents, heartbeats, hostAgents, monitorReports] = await Promise.all([
    sources.compute.listServices({ binary: 'nova-compute' }),
    sources.config.taggedAggregates
      ? sources.compute.listAggregates().catch((error: unknown): Aggregate[] | null => {
          warnings.push(`aggregates could not be read: ${(error as Error).message}`);
          return null;
        })
      : Promise.resolve(null),
    sources.incidents.openByShortHost(),
    sources.config.checkHeartbeat && sources.heartbeatTimes !== null
      ? new LatestHostTimes(
          sources.heartbeatTimes.redis,
          heartbeatTimesKey(sources.heartbeatTimes.keyPrefix),
        ).all()
      : Promise.resolve(null),
    sources.config.heartbeatDetection && sources.heartbeatTimes !== null
      ? readHostAgentEvidence(sources.heartbeatTimes.redis, sources.heartbeatTimes.keyPrefix)
      : Promise.resolve(null),
    sources.heartbeatTimes === null
      ? Promise.resolve(null)
      : new MonitorReportStore(
          sources.heartbeatTimes.redis,
          sources.heartbeatTimes.keyPrefix,
        ).admittedByShortHost(),
  ]);
  const now = new Date();
  const services: ServiceView[] = [];
  for (const record of records) {
    const view = toServiceView(record, now);
    if ('shortHost' in view) services.push(view);
  }
  return {
    snapshot: {
      now,
      services,
      openIncidents,
      heartbeats,
      hostAgents,
      monitorReports,
      aggregates,
      config: sources.config,
    },
    records,
    warnings,
  };
}
