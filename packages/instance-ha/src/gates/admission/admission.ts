import type { GateSnapshot } from '../gate-snapshot.ts';
import {
  type AdmissionCandidates,
  type AdmissionDecision,
  CandidateFactsMissingError,
} from './admission-decision.ts';
import type { AdmissionSnapshot } from './admission-snapshot.ts';
import { admissionCandidates, hostsToRead } from './early-gates.ts';
import { LATER_GATES, type Stage, type StageInputs } from './later-gates.ts';
import { nextMassEventHolds } from './mass-event-hold-down-gate.ts';

/** The decision of G0–G4 before the later gates add theirs. */
function earlyDecision(snapshot: AdmissionSnapshot, early: AdmissionCandidates): AdmissionDecision {
  return {
    deduplication: early.deduplication,
    heartbeat: early.heartbeat,
    suspects: early.suspects,
    allServicesStale: early.allServicesStale,
    evacuability: null,
    massEventHoldDown: null,
    massEventHolds: snapshot.massEventHolds,
    threshold: null,
    thresholdJudgement: null,
    aggregateLimits: null,
    rateLimited: [],
    scheduler: null,
    blocked: early.blocked,
    thresholdExceeded: [],
    stoppedBy: early.stoppedBy,
    admitted: [],
    judged: early.judged,
    heartbeatCliff: early.heartbeat?.next ?? snapshot.heartbeatCliff,
    kdumpClockUpdates: [],
  };
}

/**
 * The admission of docs/instance-ha-rules.md#admission-gates, in InstanceHA's order, as one pure
 * function of the cycle's snapshot: G0 de-duplication, G2/G3 heartbeats, G4 all-services-stale, G5
 * evacuability, G6 THRESHOLD (strict `>`; stops resumes too), G7 per-aggregate
 * `instanceha:max_failures` (resumes bypass it), the mass-event hold-down (a host a mass gate held
 * waits MASS_EVENT_HOLD_DOWN after the block cleared or the event's last host came back), G8 MAX_HOSTS_PER_CYCLE (resumes not counted),
 * DISABLED, G9 scheduler sanity, G10 kdump wait. THRESHOLD, the aggregate count and DISABLED are
 * the gates every later action re-checks (ACTION_GATES), judged here once for the cycle. A gate may
 * stop the cycle (nothing admitted, `stoppedBy` names it). It never reads, writes nor logs: the node
 * monitor reads the snapshot, applies `heartbeatCliff`, `massEventHolds` and `kdumpClockUpdates`,
 * logs and publishes.
 * @param early G0–G4 of this snapshot (`admissionCandidates(snapshot)`) when the caller has them already:
 *   the node monitor judges them first to know which hosts' facts to read
 * @throws CandidateFactsMissingError when G0–G4 leave candidates and the snapshot has no facts for them
 */
export function admit(
  snapshot: AdmissionSnapshot,
  early: AdmissionCandidates = admissionCandidates(snapshot),
): AdmissionDecision {
  const decision = gatesInOrder(snapshot, early);
  return { ...decision, massEventHolds: holdsAfter(snapshot, decision) };
}

/** The mass-event holds the cycle leaves: what its mass gates blocked, what cleared, what is gone. */
function holdsAfter(snapshot: AdmissionSnapshot, decision: AdmissionDecision) {
  const exceeded = decision.thresholdExceeded.map((each) => ({
    gate: each.scope === 'global' ? ('threshold' as const) : ('aggregate-threshold' as const),
    hosts: each.hosts,
  }));
  return nextMassEventHolds(snapshot.massEventHolds, {
    blocked: [...decision.blocked, ...exceeded],
    // Silent hosts (suspects) are still part of the event: a mass gate may have named them.
    stillFailed: new Set([
      ...snapshot.categorisation.freshFailures.map((failure) => failure.service.host),
      ...decision.suspects,
    ]),
    clearedNow: decision.massEventHoldDown?.clearedNow ?? [],
    admitted: new Set(decision.admitted.map((each) => each.service.host)),
    now: snapshot.now,
  });
}

function gatesInOrder(snapshot: AdmissionSnapshot, early: AdmissionCandidates): AdmissionDecision {
  const { needed, hosts } = hostsToRead(early);
  let stage: Stage = { decision: earlyDecision(snapshot, early), survivors: [], finished: !needed };
  if (stage.finished) return stage.decision;
  const facts = snapshot.candidateFacts;
  if (facts === null) throw new CandidateFactsMissingError(hosts);
  const { config, now } = snapshot;
  const cycle: GateSnapshot = {
    now,
    services: snapshot.categorisation.services,
    openIncidents: snapshot.openIncidents,
    heartbeats: null,
    aggregates: config.taggedAggregates ? facts.aggregates : null,
    config,
  };
  const inputs: StageInputs = { snapshot, early, facts, cycle };
  for (const [name, step] of LATER_GATES) {
    stage = step(stage, inputs);
    stage = { ...stage, decision: { ...stage.decision, judged: [...stage.decision.judged, name] } };
    if (stage.finished) break;
  }
  return stage.decision;
}
