import type { ServiceView } from '../../services/categorise.ts';
import { disabledGate } from '../action-gates.ts';
import { judgeAggregateLimits } from '../aggregate-impact.ts';
import type { GateSnapshot } from '../gate-snapshot.ts';
import { thresholdGate } from '../threshold-gate.ts';
import type {
  AdmissionCandidates,
  AdmissionDecision,
  AdmissionGateName,
  AdmittedHost,
  BlockedHosts,
  CycleStop,
} from './admission-decision.ts';
import type { AdmissionSnapshot, CandidateFacts } from './admission-snapshot.ts';
import { judgeEvacuability } from './evacuability-gate.ts';
import { judgeKdumpWaits } from './kdump-gate.ts';
import { judgeMassEventHoldDown } from './mass-event-hold-down-gate.ts';
import { applyRateLimit } from './rate-limit-gate.ts';
import { judgeSchedulers } from './scheduler-gate.ts';

const hostsOf = (services: ReadonlyArray<ServiceView>): string[] => services.map((service) => service.host);

/** What the gates after G4 hand on: the decision so far and the failed hosts still in the running. */
export interface Stage {
  readonly decision: AdmissionDecision;
  readonly survivors: ReadonlyArray<ServiceView>;
  /** True once nothing is left to admit (the cycle ends without a gate stopping it). */
  readonly finished: boolean;
}

/** What every gate after G4 reads: the snapshot, what G0–G4 left, the candidates' facts. */
export interface StageInputs {
  readonly snapshot: AdmissionSnapshot;
  readonly early: AdmissionCandidates;
  readonly facts: CandidateFacts;
  /** The cycle as the action gates see it (THRESHOLD, the aggregate count and DISABLED judge it). */
  readonly cycle: GateSnapshot;
}

const blockedBy = (stage: Stage, block: BlockedHosts): AdmissionDecision['blocked'] => [
  ...stage.decision.blocked,
  block,
];
const stopped = (stage: Stage, stoppedBy: CycleStop, block?: BlockedHosts): Stage => ({
  ...stage,
  decision: {
    ...stage.decision,
    stoppedBy,
    blocked: block ? blockedBy(stage, block) : stage.decision.blocked,
  },
  finished: true,
});
const remainingHosts = (stage: Stage, early: AdmissionCandidates) => [
  ...hostsOf(stage.survivors),
  ...early.resume.map((candidate) => candidate.item.host),
];

/** G5 evacuability: failed hosts with nothing to evacuate are dropped. */
function evacuabilityStep(stage: Stage, { early, facts, snapshot }: StageInputs): Stage {
  const evacuability = judgeEvacuability(
    early.fresh.map((failure) => failure.service),
    facts,
    snapshot.config,
  );
  const blocked =
    evacuability.dropped.length === 0
      ? stage.decision.blocked
      : blockedBy(stage, {
          gate: 'not-evacuable',
          hosts: evacuability.dropped.map((each) => each.service.host),
          reason: [...new Set(evacuability.dropped.map((each) => each.reason))].join(', '),
        });
  return { ...stage, decision: { ...stage.decision, evacuability, blocked }, survivors: evacuability.kept };
}

/** G6 THRESHOLD, the gate every fence and evacuation re-checks, over the cycle: it stops resumes too. */
function thresholdStep(stage: Stage, { snapshot, early, cycle }: StageInputs): Stage {
  if (snapshot.categorisation.services.length === 0 || stage.survivors.length === 0) return stage;
  const { judgement, result } = thresholdGate.judgeCycle(cycle, {
    survivors: hostsOf(stage.survivors),
    suspects: early.suspects,
  });
  const decision = { ...stage.decision, threshold: result, thresholdJudgement: judgement };
  if (judgement.verdict === 'pass') return { ...stage, decision };
  const exceeded = {
    scope: 'global' as const,
    aggregate: null,
    impacted: result.impacted,
    total: result.total,
    percent: result.percent,
    threshold: snapshot.config.thresholdPercent,
    hosts: hostsOf(stage.survivors),
    impactedHosts: [...result.impactedHosts],
  };
  return stopped({ ...stage, decision: { ...decision, thresholdExceeded: [exceeded] } }, 'threshold');
}

/** G7 `instanceha:max_failures`, counted as every re-check counts (resumes bypass it). */
function aggregateLimitStep(stage: Stage, { snapshot, cycle }: StageInputs): Stage {
  if (!snapshot.config.taggedAggregates || cycle.aggregates === null || stage.survivors.length === 0)
    return stage;
  const limits = judgeAggregateLimits(cycle, hostsOf(stage.survivors));
  const exceeded = limits.trips.map((trip) => ({
    scope: 'aggregate' as const,
    aggregate: trip.aggregate,
    impacted: trip.impacted,
    total: trip.total,
    percent: trip.total === 0 ? 0 : (trip.impacted / trip.total) * 100,
    threshold: trip.maxFailures,
    hosts: [...trip.hosts],
    impactedHosts: [...trip.impactedHosts],
  }));
  return {
    ...stage,
    decision: {
      ...stage.decision,
      aggregateLimits: limits,
      thresholdExceeded: [...stage.decision.thresholdExceeded, ...exceeded],
    },
    survivors: stage.survivors.filter((service) => !limits.blocked.has(service.host)),
  };
}

/**
 * The mass-event hold-down: a failed host a mass gate blocked in an earlier cycle waits
 * MASS_EVENT_HOLD_DOWN after its block cleared, unless its own death is seen (a kdump packet).
 */
function massEventHoldDownStep(stage: Stage, { snapshot, facts }: StageInputs): Stage {
  const { config, now } = snapshot;
  const judgement = judgeMassEventHoldDown(
    stage.survivors,
    snapshot.massEventHolds,
    {
      holdDownSeconds: config.massEventHoldDownSeconds,
      checkKdump: config.checkKdump,
      kdumpTimeoutSeconds: config.kdumpTimeoutSeconds,
    },
    facts.kdumpClocks,
    now,
  );
  const until = judgement.held.map((each) => `${each.host} until ${each.until.toISOString()}`);
  const blocked =
    judgement.held.length === 0
      ? stage.decision.blocked
      : blockedBy(stage, {
          gate: 'mass-event-hold-down',
          hosts: judgement.held.map((each) => each.host),
          reason: `silent since a mass event that was blocked; held MASS_EVENT_HOLD_DOWN ${config.massEventHoldDownSeconds}s after the block cleared or the event's last host came back, unless they report again: ${until.join(', ')}`,
        });
  return {
    ...stage,
    decision: { ...stage.decision, massEventHoldDown: judgement, blocked },
    survivors: judgement.released,
  };
}

/** G8 MAX_HOSTS_PER_CYCLE (resumes not counted); the cycle ends when nobody is left. */
function rateLimitStep(stage: Stage, { snapshot, early }: StageInputs): Stage {
  const { maxHostsPerCycle } = snapshot.config;
  const { admitted, deferred } = applyRateLimit(stage.survivors, maxHostsPerCycle);
  const blocked =
    deferred.length === 0
      ? stage.decision.blocked
      : blockedBy(stage, {
          gate: 'rate-limit',
          hosts: hostsOf(deferred),
          reason: `MAX_HOSTS_PER_CYCLE ${maxHostsPerCycle}: ${deferred.length} host(s) deferred`,
        });
  return {
    decision: { ...stage.decision, rateLimited: hostsOf(deferred), blocked },
    survivors: admitted,
    finished: admitted.length + early.resume.length === 0,
  };
}

/** DISABLED, the gate every action re-checks: it holds every host alike. */
function disabledStep(stage: Stage, { early, cycle }: StageInputs): Stage {
  const judgement = disabledGate.judge(cycle, '');
  if (judgement.verdict === 'pass') return stage;
  return stopped(stage, 'disabled', {
    gate: 'disabled',
    hosts: remainingHosts(stage, early),
    reason: judgement.reason,
  });
}

/** G9 scheduler sanity. */
function schedulerStep(stage: Stage, { early, facts }: StageInputs): Stage {
  const scheduler = judgeSchedulers(facts.schedulers);
  const judged = { ...stage, decision: { ...stage.decision, scheduler } };
  if (scheduler.verdict === 'pass') return judged;
  return stopped(judged, 'scheduler-down', {
    gate: 'scheduler-down',
    hosts: remainingHosts(stage, early),
    reason: scheduler.reason,
  });
}

/** G10 kdump wait, then InstanceHA's submission order: new failures, kdump-fenced ones, resumes. */
function kdumpStep(stage: Stage, { snapshot, early, facts }: StageInputs): Stage {
  const { config, now } = snapshot;
  const kdump = judgeKdumpWaits(stage.survivors, facts.kdumpClocks, config, now);
  const blocked =
    kdump.waiting.length === 0
      ? stage.decision.blocked
      : blockedBy(stage, {
          gate: 'kdump-wait',
          hosts: kdump.waiting,
          reason: `waiting up to KDUMP_TIMEOUT ${config.kdumpTimeoutSeconds}s for fence_kdump`,
        });
  const incidentOf = (service: ServiceView) =>
    early.deduplication.fresh.find((candidate) => candidate.item.service.host === service.host)?.incident ??
    null;
  const failed = (service: ServiceView, kdumpFenced: boolean): AdmittedHost => ({
    service,
    incident: incidentOf(service),
    resume: false,
    kdumpFenced,
  });
  const resumed = early.resume.map((candidate) => ({
    service: candidate.item,
    incident: candidate.incident,
    resume: true,
    // An incident rebuilt from a marker after Redis lost its memory is not kdump-fenced on the
    // marker's word (docs/safety-rules.md#redis-memory-lost); InstanceHA's marker opens a new one.
    kdumpFenced: candidate.incident ? candidate.incident.kdumpFenced : candidate.item.marker.kdump,
  }));
  const admitted = [
    ...kdump.normal.map((service) => failed(service, false)),
    ...kdump.kdumpFenced.map((service) => failed(service, true)),
    ...resumed,
  ];
  return {
    ...stage,
    decision: { ...stage.decision, blocked, admitted, kdumpClockUpdates: kdump.clockChanges },
    finished: true,
  };
}

/** The gates after G4, in order, each a pure step from one stage to the next. */
export const LATER_GATES: ReadonlyArray<
  readonly [AdmissionGateName, (stage: Stage, inputs: StageInputs) => Stage]
> = [
  ['evacuability', evacuabilityStep],
  ['threshold', thresholdStep],
  ['aggregate-threshold', aggregateLimitStep],
  ['mass-event-hold-down', massEventHoldDownStep],
  ['rate-limit', rateLimitStep],
  ['disabled', disabledStep],
  ['scheduler', schedulerStep],
  ['kdump-wait', kdumpStep],
];
