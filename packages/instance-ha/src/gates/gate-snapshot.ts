import type { Aggregate } from '@lifeguard/openstack';
import type { InstanceHaConfig } from '../config/instance-ha-config.ts';
import type { HostAgentEvidence } from '../host-agents/host-agent-findings.ts';
import type { Incident } from '../incidents/incident.ts';
import type { MonitorReport } from '../monitor-reports/monitor-report.ts';
import type { ServiceView } from '../services/categorise.ts';

/** The config.yaml keys the gates read. */
export type GateConfig = Pick<
  InstanceHaConfig,
  | 'disabled'
  | 'deltaSeconds'
  | 'thresholdPercent'
  | 'thresholdSuspectAgeSeconds'
  | 'taggedAggregates'
  | 'evacuableTag'
  | 'checkHeartbeat'
  | 'heartbeatTimeoutSeconds'
  | 'heartbeatDetection'
  | 'heartbeatDownAfterSeconds'
  | 'novaReportIntervalSeconds'
>;

/**
 * The world as it is at one moment, read once and judged by every gate: nothing in a gate does I/O.
 */
export interface GateSnapshot {
  readonly now: Date;
  /** Every valid `nova-compute` service, viewed at `now` (see toServiceView). */
  readonly services: ReadonlyArray<ServiceView>;
  /** lifeguard's open incidents by short hostname. */
  readonly openIncidents: ReadonlyMap<string, Incident>;
  /**
   * Last heartbeat per short hostname, when CHECK_HEARTBEAT is on and the heartbeat times could be
   * read; null otherwise (the heartbeat gate then lets everything through).
   */
  readonly heartbeats: ReadonlyMap<string, Date> | null;
  /**
   * What the host agents said, when HEARTBEAT_DETECTION is on and it could be read; null or absent
   * otherwise (the gates then judge by Nova and HEARTBEAT_TIMEOUT alone).
   */
  readonly hostAgents?: HostAgentEvidence | null;
  /**
   * Host monitors' admitted reports by short hostname (a Masakari COMPUTE_HOST STOPPED the node
   * monitor admitted), when they could be read; absent otherwise.
   */
  readonly monitorReports?: ReadonlyMap<string, MonitorReport> | null;
  /**
   * Nova's aggregates with TAGGED_AGGREGATES, or null (not tagged, or the list failed: THRESHOLD then
   * counts every host and no `instanceha:max_failures` applies).
   */
  readonly aggregates: ReadonlyArray<Aggregate> | null;
  readonly config: GateConfig;
}
