import type { AdmissionGate, EventData } from '@lifeguard/contracts';
import type {
  Categorisation,
  FreshFailure,
  GateSnapshot,
  Incident,
  InstanceHaConfig,
  KdumpStore,
  ServiceView,
  ThresholdResult,
} from '@lifeguard/instance-ha';
import type { Aggregate, ComputeApi, ComputeService } from '@lifeguard/openstack';
import type { Logger } from '@lifeguard/runtime';
import type { EvacuabilityChecker, EvacuabilityResult } from '../evacuability.ts';
import type { AggregateLimitResult } from './aggregate-limit.ts';
import type { AllServicesStaleResult } from './all-services-stale.ts';
import type { DeduplicationResult } from './deduplicate.ts';
import type { HeartbeatGate, HeartbeatGateResult } from './heartbeat-gate.ts';

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

/** Everything the gate chain decided in one cycle (for events, logs and tests). */
export interface AdmissionDecision {
  readonly deduplication: DeduplicationResult;
  readonly heartbeat: HeartbeatGateResult<FreshFailure> | null;
  readonly allServicesStale: AllServicesStaleResult | null;
  readonly evacuability: EvacuabilityResult | null;
  readonly threshold: ThresholdResult | null;
  readonly aggregateLimits: AggregateLimitResult | null;
  readonly blocked: ReadonlyArray<BlockedHosts>;
  readonly thresholdExceeded: ReadonlyArray<EventData<'threshold.exceeded'>>;
  /** The gate that stopped the whole cycle, if any. */
  readonly stoppedBy: CycleStop | null;
  readonly admitted: ReadonlyArray<AdmittedHost>;
}

export interface AdmissionDependencies {
  readonly compute: ComputeApi;
  readonly evacuability: EvacuabilityChecker;
  readonly kdump: KdumpStore;
  readonly heartbeatGate: HeartbeatGate | null;
  /** Last heartbeat per short host and the listener's start, when CHECK_HEARTBEAT is on. */
  readonly heartbeats:
    | (() => Promise<{ last: ReadonlyMap<string, Date>; listeningSince: Date | null }>)
    | null;
  readonly config: InstanceHaConfig;
  readonly logger: Logger;
  /** The leader's fencing token this cycle (G0 announces again incidents only older leaders announced). */
  readonly fencingToken?: number | null;
}

/**
 * One cycle's admission as the gates hand it on: the inputs, the hosts still in the running, and
 * what each gate decided so far. Each gate reads it and narrows it.
 */
export interface AdmissionRun {
  readonly categorisation: Categorisation;
  readonly openIncidents: ReadonlyMap<string, Incident>;
  readonly now: Date;
  readonly dependencies: AdmissionDependencies;
  /** Open incidents of the fresh failures that passed G0 (a publish pending), by host. */
  pending: ReadonlyMap<string, Incident | null>;
  /** Fresh failures still in the running (G0–G4). */
  fresh: FreshFailure[];
  /** Silent hosts not failed yet: impacted in G4, G6 and G7, never admitted. */
  suspects: string[];
  /** Failed hosts still in the running (G5–G10). */
  survivors: ServiceView[];
  /** Resume candidates (they pass G7 and G8, not THRESHOLD, DISABLED nor G9). */
  resume: DeduplicationResult['resume'];
  /** Nova's aggregates (read once, for G5 and G7), or null. */
  aggregatesRead: Promise<Aggregate[] | null>;
  aggregates: Aggregate[] | null;
  /** The nova-scheduler services (read alongside G5, judged by G9), or the error of the read. */
  schedulersRead: Promise<ComputeService[] | Error>;
  /** The decision as far as the gates made it. */
  decision: {
    -readonly [Field in keyof AdmissionDecision]: AdmissionDecision[Field];
  } & { blocked: BlockedHosts[]; thresholdExceeded: Array<EventData<'threshold.exceeded'>> };
}

/**
 * What one admission gate did with the run: `continue` to the next gate, `stop` the cycle with no
 * host admitted (`stoppedBy` names the gate, or null when nothing was left to admit).
 */
export type GateStep =
  | { readonly kind: 'continue' }
  | { readonly kind: 'stop'; readonly stoppedBy: CycleStop | null };

/** One gate of the admission chain (docs/instance-ha-rules.md#admission-gates), named as in the doc. */
export interface CycleGate {
  readonly name: string;
  run(run: AdmissionRun): GateStep | Promise<GateStep>;
}

export const CONTINUE: GateStep = { kind: 'continue' };
export const stop = (stoppedBy: CycleStop | null): GateStep => ({ kind: 'stop', stoppedBy });

export const hostsOf = (services: ReadonlyArray<ServiceView>): string[] =>
  services.map((service) => service.host);

/** Every host still in the running: the survivors, then the resume candidates. */
export const remainingHosts = (run: AdmissionRun): string[] => [
  ...hostsOf(run.survivors),
  ...run.resume.map((candidate) => candidate.item.host),
];

/**
 * The cycle as a GateSnapshot, for the gates of instance-ha that every later action passes again
 * (docs/instance-ha-rules.md#admission-gates): the same rule objects, judged once for the cycle.
 */
export function cycleSnapshot(run: AdmissionRun): GateSnapshot {
  return {
    now: run.now,
    services: run.categorisation.services,
    openIncidents: run.openIncidents,
    heartbeats: null,
    aggregates: run.aggregates,
    config: run.dependencies.config,
  };
}
