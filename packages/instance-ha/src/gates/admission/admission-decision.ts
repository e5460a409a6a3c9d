import type { AdmissionGate, EventData } from '@lifeguard/contracts';
import type { Incident } from '../../incidents/incident.ts';
import type { FreshFailure, ServiceView } from '../../services/categorise.ts';
import type { ThresholdResult } from '../../services/threshold.ts';
import type { AggregateLimitResult } from '../aggregate-limit.ts';
import type { GateJudgement } from '../gate.ts';
import type { AllServicesStaleResult } from './all-services-stale-gate.ts';
import type { Candidate, DeduplicationResult } from './deduplication-gate.ts';
import type { EvacuabilityResult } from './evacuability-gate.ts';
import type { HeartbeatCliffState, HeartbeatJudgement } from './heartbeat-cliff-gate.ts';
import type { KdumpClockUpdate } from './kdump-gate.ts';
import type { HoldDownJudgement, MassEventHolds } from './mass-event-hold-down-gate.ts';
import type { SchedulerJudgement } from './scheduler-gate.ts';

/** The admission gates in the order they judge a cycle (docs/instance-ha-rules.md#admission-gates). */
export const ADMISSION_GATE_ORDER = [
  'deduplication',
  'heartbeat',
  'all-services-stale',
  'evacuability',
  'threshold',
  'aggregate-threshold',
  'mass-event-hold-down',
  'rate-limit',
  'disabled',
  'scheduler',
  'kdump-wait',
] as const;
export type AdmissionGateName = (typeof ADMISSION_GATE_ORDER)[number];

/** A host admitted for fencing and evacuation this cycle. */
export interface AdmittedHost {
  readonly service: ServiceView;
  /** The open incident to reuse (a publish pending, or a resume), or null to open one. */
  readonly incident: Incident | null;
  readonly resume: boolean;
  readonly kdumpFenced: boolean;
}

export interface BlockedHosts {
  readonly gate: AdmissionGate;
  readonly hosts: ReadonlyArray<string>;
  readonly reason: string;
}

/** The gate that stopped a whole cycle. */
export type CycleStop = 'all-services-stale' | 'threshold' | 'disabled' | 'scheduler-down';

/** What G0–G4 leave in the running: the hosts whose facts the monitor reads before G5. */
export interface AdmissionCandidates {
  readonly deduplication: DeduplicationResult;
  readonly heartbeat: HeartbeatJudgement<FreshFailure> | null;
  /** Silent hosts not failed yet: impacted in G4, G6 and G7, never admitted. */
  readonly suspects: ReadonlyArray<string>;
  readonly allServicesStale: AllServicesStaleResult;
  /** Fresh failures still in the running, for G5. */
  readonly fresh: ReadonlyArray<FreshFailure>;
  /** Resume candidates (they pass G7 and G8, not THRESHOLD, DISABLED nor G9). */
  readonly resume: ReadonlyArray<Candidate<ServiceView>>;
  readonly blocked: ReadonlyArray<BlockedHosts>;
  /** Set when G4 stopped the cycle. */
  readonly stoppedBy: CycleStop | null;
  /** The gates judged, in order. */
  readonly judged: ReadonlyArray<AdmissionGateName>;
}

/** Everything the gates decided in one cycle, and the state changes the monitor applies after it. */
export interface AdmissionDecision {
  readonly deduplication: DeduplicationResult;
  readonly heartbeat: HeartbeatJudgement<FreshFailure> | null;
  readonly suspects: ReadonlyArray<string>;
  readonly allServicesStale: AllServicesStaleResult | null;
  readonly evacuability: EvacuabilityResult | null;
  readonly threshold: ThresholdResult | null;
  /** G6's verdict and reason, the words every action's THRESHOLD re-check gives for the same count. */
  readonly thresholdJudgement: GateJudgement | null;
  readonly aggregateLimits: AggregateLimitResult | null;
  /** The failed hosts held after a mass event, and those released, when the cycle got that far. */
  readonly massEventHoldDown: HoldDownJudgement | null;
  /** The mass-event holds for the next cycle. */
  readonly massEventHolds: MassEventHolds;
  /** G8: the failed hosts deferred to later cycles by MAX_HOSTS_PER_CYCLE. */
  readonly rateLimited: ReadonlyArray<string>;
  readonly scheduler: SchedulerJudgement | null;
  readonly blocked: ReadonlyArray<BlockedHosts>;
  readonly thresholdExceeded: ReadonlyArray<EventData<'threshold.exceeded'>>;
  /** The gate that stopped the whole cycle, if any. */
  readonly stoppedBy: CycleStop | null;
  /** Admitted: new failures first, then kdump-fenced ones, then resumes (InstanceHA's order). */
  readonly admitted: ReadonlyArray<AdmittedHost>;
  /** The gates judged, in order. */
  readonly judged: ReadonlyArray<AdmissionGateName>;
  /** The heartbeat cliff state for the next cycle. */
  readonly heartbeatCliff: HeartbeatCliffState;
  /** The kdump wait clocks to start or clear (G10). */
  readonly kdumpClockUpdates: ReadonlyArray<KdumpClockUpdate>;
}

/** The snapshot's candidate facts were needed (G0–G4 left candidates) but not read. */
export class CandidateFactsMissingError extends Error {
  constructor(readonly hosts: ReadonlyArray<string>) {
    super(`the admission needs the candidate facts of ${hosts.join(', ')}, and none were read`);
    this.name = 'CandidateFactsMissingError';
  }
}
