import type { InstanceHaConfig } from '../../config/instance-ha-config.ts';
import type { HostAgentEvidence } from '../../host-agents/host-agent-findings.ts';
import type { Incident } from '../../incidents/incident.ts';
import type { Categorisation } from '../../services/categorise.ts';
import type { GateConfig } from '../gate-snapshot.ts';
import type { EvacuabilityFacts } from './evacuability-gate.ts';
import type { HeartbeatCliffState } from './heartbeat-cliff-gate.ts';
import type { KdumpClock } from './kdump-gate.ts';
import type { MassEventHolds } from './mass-event-hold-down-gate.ts';
import type { SchedulerFacts } from './scheduler-gate.ts';

/** The config.yaml keys the admission gates read: the action gates' and the admission's own. */
export type AdmissionConfig = GateConfig &
  Pick<
    InstanceHaConfig,
    | 'taggedImages'
    | 'taggedFlavors'
    | 'heartbeatCliffThresholdPercent'
    | 'heartbeatCliffMaxCycles'
    | 'massEventHoldDownSeconds'
    | 'maxHostsPerCycle'
    | 'checkKdump'
    | 'kdumpTimeoutSeconds'
    | 'fencingTimeoutSeconds'
    | 'evacuationTimeoutSeconds'
    | 'evacuationMaxThreads'
    | 'evacuationStaggerSeconds'
  >;

/**
 * What the node monitor reads about the hosts that G0–G4 leave in the running (see
 * admissionCandidates), in parallel, only in a cycle that has any: their servers and the evacuable
 * tags (G5), the aggregates (G5, G6, G7), the `nova-scheduler` services (G9) and the kdump clocks (G10).
 */
export interface CandidateFacts extends EvacuabilityFacts {
  readonly schedulers: SchedulerFacts;
  /** The failed hosts' kdump packets and clocks, by host as Nova names it (with CHECK_KDUMP). */
  readonly kdumpClocks: ReadonlyMap<string, KdumpClock>;
}

/**
 * One poll cycle's world as the admission gates judge it, read by the node monitor before any gate
 * runs; nothing in a gate does I/O.
 */
export interface AdmissionSnapshot {
  readonly now: Date;
  /** The `nova-compute` services of this cycle, categorised (categoriseServices). */
  readonly categorisation: Categorisation;
  /** lifeguard's open incidents by short hostname. */
  readonly openIncidents: ReadonlyMap<string, Incident>;
  readonly config: AdmissionConfig;
  /** The leader's fencing token this cycle (G0 announces again incidents only older leaders announced). */
  readonly fencingToken: number | null;
  /**
   * With CHECK_HEARTBEAT and a running listener: the last heartbeat per short hostname and the
   * listener's start; with HEARTBEAT_DETECTION also what the host agents said (`hostAgents`).
   */
  readonly heartbeats: {
    readonly last: ReadonlyMap<string, Date>;
    readonly listeningSince: Date | null;
    readonly hostAgents?: HostAgentEvidence | null;
  } | null;
  /** The heartbeat cliff state the previous cycle left (G2/G3). */
  readonly heartbeatCliff: HeartbeatCliffState;
  /** The hosts held after a mass event, as the previous cycle left them. */
  readonly massEventHolds: MassEventHolds;
  /** The candidates' facts, or null when G0–G4 left no candidate (nothing was read). */
  readonly candidateFacts: CandidateFacts | null;
}
