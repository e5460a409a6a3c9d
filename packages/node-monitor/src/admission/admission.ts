import type { Categorisation, Incident } from '@lifeguard/instance-ha';
import type { AdmissionDecision, AdmissionDependencies, AdmissionRun, CycleGate } from './admission-run.ts';
import {
  allServicesStaleGate,
  deduplicationGate,
  evacuabilityGate,
  heartbeatCycleGate,
} from './candidate-gates.ts';
import { kdumpCycleGate } from './kdump-gate.ts';
import {
  aggregateLimitCycleGate,
  disabledCycleGate,
  rateLimitCycleGate,
  schedulerCycleGate,
  thresholdCycleGate,
} from './limit-gates.ts';

export type {
  AdmissionDecision,
  AdmissionDependencies,
  AdmittedHost,
  BlockedHosts,
  CycleGate,
  CycleStop,
  GateStep,
} from './admission-run.ts';

/**
 * The admission gate chain of docs/instance-ha-rules.md#admission-gates, in InstanceHA's order: G0
 * de-duplication (open incidents in Redis), G2/G3 heartbeat (grace, cliff, alive hosts), G4
 * all-services-stale, G5 evacuability, G6 THRESHOLD (strict `>`; blocks resume candidates too), G7
 * per-aggregate `instanceha:max_failures` (resume candidates bypass it), G8 MAX_HOSTS_PER_CYCLE
 * (resume candidates not counted), DISABLED (instance-ha's disabledGate), G9 scheduler sanity, G10
 * kdump wait (instance-ha's kdump state machine).
 */
export const ADMISSION_GATES: ReadonlyArray<CycleGate> = [
  deduplicationGate,
  heartbeatCycleGate,
  allServicesStaleGate,
  evacuabilityGate,
  thresholdCycleGate,
  aggregateLimitCycleGate,
  rateLimitCycleGate,
  disabledCycleGate,
  schedulerCycleGate,
  kdumpCycleGate,
];

/**
 * The state of one admission run before its first gate: nothing pending, found or decided yet.
 * @param openIncidents lifeguard's open incidents by short hostname
 */
export function newAdmissionRun(
  categorisation: Categorisation,
  openIncidents: ReadonlyMap<string, Incident>,
  now: Date,
  dependencies: AdmissionDependencies,
): AdmissionRun {
  return {
    categorisation,
    openIncidents,
    now,
    dependencies,
    pending: new Map(),
    fresh: [],
    suspects: [],
    survivors: [],
    resume: [],
    aggregatesRead: Promise.resolve(null),
    aggregates: null,
    schedulersRead: Promise.resolve([]),
    decision: {
      deduplication: { fresh: [], resume: [], dropped: [] },
      heartbeat: null,
      allServicesStale: null,
      evacuability: null,
      threshold: null,
      aggregateLimits: null,
      blocked: [],
      thresholdExceeded: [],
      stoppedBy: null,
      admitted: [],
    },
  };
}

/**
 * Runs ADMISSION_GATES in order over one cycle's categorisation; a gate may stop the cycle (nothing
 * admitted, `stoppedBy` names it). Admitted: new failures first, then kdump-fenced ones, then resumes
 * (InstanceHA's submission order). It never fences nor evacuates.
 * @param openIncidents lifeguard's open incidents by short hostname
 * @throws the error of a Nova or Redis read a gate cannot do without (servers of a failed host, kdump)
 */
export async function admit(
  categorisation: Categorisation,
  openIncidents: ReadonlyMap<string, Incident>,
  now: Date,
  dependencies: AdmissionDependencies,
): Promise<AdmissionDecision> {
  const run = newAdmissionRun(categorisation, openIncidents, now, dependencies);
  for (const gate of ADMISSION_GATES) {
    const step = await gate.run(run);
    if (step.kind === 'stop') {
      run.decision.stoppedBy = step.stoppedBy;
      break;
    }
  }
  return run.decision;
}
