import { hostsInEvacuableAggregates } from '../evacuable/evacuable-tags.ts';
import { evaluateThreshold, type ThresholdResult, thresholdResult } from '../services/threshold.ts';
import type { GateJudgement, HostGate } from './gate.ts';
import type { GateSnapshot } from './gate-snapshot.ts';
import { impactedHosts } from './impacted-hosts.ts';
import { serviceOfHost } from './service-of-host.ts';

/** What one poll cycle knows beyond the snapshot: its failed hosts and its silent ones. */
export interface CycleImpact {
  /** The cycle's failed hosts that survived the gates before THRESHOLD (Nova may still say up). */
  readonly survivors: ReadonlyArray<string>;
  /** Silent hosts not failed yet (see suspectServices): impacted, never admitted. */
  readonly suspects: ReadonlyArray<string>;
}

/** THRESHOLD's judgement with the count it rests on (for the cycle's decision and its events). */
export interface ThresholdJudgement {
  readonly judgement: GateJudgement;
  readonly result: ThresholdResult;
}

/** The THRESHOLD gate: one HostGate for an action, and the same gate over a whole poll cycle. */
export interface ThresholdGate extends HostGate {
  /** THRESHOLD for an action on `host` (a fence, an evacuation), with its count. */
  judgeHost(snapshot: GateSnapshot, host: string): ThresholdJudgement;
  /** THRESHOLD for a poll cycle's admission (gate G6), with its count. */
  judgeCycle(snapshot: GateSnapshot, cycle: CycleImpact): ThresholdJudgement;
}

/**
 * The hosts THRESHOLD counts: with TAGGED_AGGREGATES and an aggregate list, the hosts of evacuable
 * aggregates; null (every compute service) otherwise, and when no evacuable aggregate has a host —
 * the admission never gets there then, G5 having dropped every failed host.
 */
export function thresholdScope(snapshot: GateSnapshot): ReadonlySet<string> | null {
  const { config, aggregates } = snapshot;
  if (!config.taggedAggregates || aggregates === null) return null;
  const scope = hostsInEvacuableAggregates(aggregates, config.evacuableTag);
  return scope.size === 0 ? null : scope;
}

const NAME = 'threshold';

/** The verdict and reason of a count: `defer` while impacted ÷ total × 100 > THRESHOLD. */
function judged(result: ThresholdResult, thresholdPercent: number): ThresholdJudgement {
  const reason = `${result.impacted} of ${result.total} compute hosts impacted (${result.percent.toFixed(1)} %, THRESHOLD ${thresholdPercent} %)`;
  return { judgement: { gate: NAME, verdict: result.blocked ? 'defer' : 'pass', reason }, result };
}

/**
 * THRESHOLD (docs/instance-ha-rules.md#threshold), one gate for the node monitor's admission and
 * every later action (docs/architecture.md): the scope (thresholdScope), the count against THRESHOLD
 * (strict `>`, thresholdResult), the verdict (`defer` when over, else `pass`) and the reason
 * (`3 of 4 compute hosts impacted (75.0 %, THRESHOLD 50 %)`) are the same for both. What counts as
 * impacted is what each knows:
 * - a poll cycle (judgeCycle): InstanceHA's formula — services `down` or `forced_down` — with the
 *   cycle's surviving failed hosts and its suspects (evaluateThreshold);
 * - an action (judge, judgeHost): the snapshot's impacted hosts (see isImpacted: down by their own
 *   reports, silent past THRESHOLD_SUSPECT_AGE, fenced, forced down by someone else) and the host
 *   acted on; an action has no cycle, so a host is judged by its reports, not by being a survivor.
 */
export const thresholdGate: ThresholdGate = {
  name: NAME,
  judge(snapshot, host) {
    return this.judgeHost(snapshot, host).judgement;
  },
  judgeHost(snapshot, host) {
    const scope = thresholdScope(snapshot);
    const inScope = (name: string) => scope === null || scope.has(name);
    const counted = snapshot.services.filter((service) => inScope(service.host)).length;
    const impacted = new Set([...impactedHosts(snapshot)].filter(inScope));
    const own = serviceOfHost(snapshot, host);
    if (own !== null && inScope(own.host)) impacted.add(own.host);
    return judged(
      thresholdResult(impacted, counted, snapshot.config.thresholdPercent),
      snapshot.config.thresholdPercent,
    );
  },
  judgeCycle(snapshot, cycle) {
    const result = evaluateThreshold({
      services: snapshot.services,
      survivors: cycle.survivors,
      suspects: cycle.suspects,
      thresholdPercent: snapshot.config.thresholdPercent,
      evacuableAggregateHosts: thresholdScope(snapshot),
    });
    return judged(result, snapshot.config.thresholdPercent);
  },
};
