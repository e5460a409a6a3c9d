import type { EvacuateHostJobData } from '@lifeguard/contracts';
import {
  ACTION_GATES,
  disabledGate,
  type GateConfig,
  type GateSnapshotSources,
  type HostGate,
  heartbeatGate,
  hostDownGate,
  type Incident,
  type IncidentStore,
  type ReadGateSnapshot,
  readGateSnapshot,
  runGates,
  shortHostname,
} from '@lifeguard/instance-ha';
import { type ComputeApi, type ComputeService, pickComputeService } from '@lifeguard/openstack';
import type { Logger } from 'pino';

/** What the safety checks concluded before a host's first evacuate. */
export type SafetyVerdict =
  | { kind: 'proceed'; incident: Incident; service: ComputeService }
  /** Never evacuate this job: a fence is missing, the host is not down, or it reports again. */
  | { kind: 'refuse'; reason: string }
  /** Not now (THRESHOLD or `instanceha:max_failures` exceeded, DISABLED): look again later. */
  | { kind: 'defer'; reason: string; gate: string };

/**
 * Where the node monitors keep each host's last heartbeat (Redis and the key prefix), when
 * CHECK_HEARTBEAT is on; null otherwise (the heartbeat gate then has no data and passes).
 */
export type HeartbeatTimesSource = GateSnapshotSources['heartbeatTimes'];

/**
 * The heartbeat source an evacuation re-check reads: the node monitors' last heartbeats with
 * CHECK_HEARTBEAT, else null (as the node monitor reads them only with CHECK_HEARTBEAT).
 */
export function heartbeatTimesSource(
  config: Pick<GateConfig, 'checkHeartbeat'>,
  redis: NonNullable<HeartbeatTimesSource>['redis'],
  keyPrefix: string,
): HeartbeatTimesSource {
  return config.checkHeartbeat ? { redis, keyPrefix } : null;
}

/**
 * What a caller already read for the checks: the incident, read by it just before (an instance's
 * re-check reads it first), and how the world is read (sharedWorldRead: one read in flight shared by
 * the re-checks that ask at once); by default the incident and the world are read here.
 */
export interface SafetyReads {
  readonly incident?: Incident | null;
  readonly readWorld?: () => Promise<ReadGateSnapshot>;
}

/** The gates of an evacuation without the THRESHOLD re-check (LIFEGUARD_EVACUATION_THRESHOLD_CHECK=false). */
const WITHOUT_THRESHOLD: ReadonlyArray<HostGate> = [hostDownGate, heartbeatGate, disabledGate];

/**
 * Defense in depth before anything is evacuated (docs/safety-rules.md rules 1, 2 and 7; docs/evacuation-worker.md, "Safety checks"):
 * 1. the incident exists, is not closed, belongs to this host (short hostnames) and carries a fence
 *    record (power-off-confirmed, kdump or operator-confirmed) — else refuse;
 * 2. the action gates of instance-ha on a fresh snapshot (ACTION_GATES, the gates every fence
 *    passed): the host is down by its own reports — `updated_at` older than DELTA, or no report
 *    since it was fenced; never a `forced_down` lifeguard set — else refuse (an operator's recorded
 *    `--host-is-reporting-override` lets a reporting host through); no heartbeat within
 *    HEARTBEAT_TIMEOUT (with CHECK_HEARTBEAT and `heartbeats`) — else refuse; DISABLED → defer;
 *    with `thresholdCheck`, THRESHOLD and `instanceha:max_failures` over the hosts impacted now →
 *    defer while exceeded (a partition or a mass outage: a person decides).
 * @param heartbeats where the node monitors keep the last heartbeats (heartbeatTimesSource), or null
 * @param reads the incident the caller just read, and the world's read to use (SafetyReads)
 */
export async function checkEvacuationSafety(
  compute: ComputeApi,
  incidents: IncidentStore,
  config: GateConfig,
  thresholdCheck: boolean,
  data: EvacuateHostJobData,
  logger: Logger,
  heartbeats: HeartbeatTimesSource = null,
  reads: SafetyReads = {},
): Promise<SafetyVerdict> {
  let incident: Incident | null;
  try {
    incident = reads.incident !== undefined ? reads.incident : await incidents.get(data.incidentId);
  } catch (error) {
    return { kind: 'refuse', reason: `the incident record is unreadable: ${(error as Error).message}` };
  }
  if (incident === null) return { kind: 'refuse', reason: `incident ${data.incidentId} does not exist` };
  if (incident.state === 'closed') return { kind: 'refuse', reason: `incident ${data.incidentId} is closed` };
  if (shortHostname(incident.host) !== shortHostname(data.host)) {
    return {
      kind: 'refuse',
      reason: `incident ${data.incidentId} belongs to host ${incident.host}, not ${data.host}`,
    };
  }
  if (incident.fence === null) {
    return {
      kind: 'refuse',
      reason: `incident ${data.incidentId} has no fence record: the host was not fenced`,
    };
  }
  const { snapshot, records, warnings } = await (reads.readWorld
    ? reads.readWorld()
    : readGateSnapshot({ compute, incidents, heartbeatTimes: heartbeats, config }));
  for (const warning of warnings) logger.warn(warning);
  const service = pickComputeService(records, data.host, data.serviceId);
  if (service === null) return { kind: 'refuse', reason: `Nova has no nova-compute service on ${data.host}` };
  const run = runGates(thresholdCheck ? ACTION_GATES : WITHOUT_THRESHOLD, snapshot, service.host);
  logger.info(
    { verdict: run.verdict, gate: run.gate, judgements: run.judgements },
    `evacuation re-check: ${run.verdict} (${run.gate}: ${run.reason})`,
  );
  if (run.verdict === 'pass') return { kind: 'proceed', incident, service };
  if (run.verdict === 'defer') return { kind: 'defer', reason: run.reason, gate: run.gate };
  return {
    kind: 'refuse',
    reason:
      run.verdict === 'recovered'
        ? `the host is not down: ${run.reason} (fenced ${incident.fence.proof} at ${incident.fence.at})`
        : run.reason,
  };
}
