import { shortHostname } from '../services/short-hostname.ts';
import { type AggregateLimitResult, evaluateAggregateLimits } from './aggregate-limit.ts';
import type { GateSnapshot } from './gate-snapshot.ts';
import { impactedHosts, impactedIncidentHosts } from './impacted-hosts.ts';

/**
 * `instanceha:max_failures` for the hosts acted on now, counted one way for the node monitor's
 * admission (G7, the cycle's surviving failed hosts) and every later action's re-check (the one host
 * fenced or evacuated): impacted = the hosts acted on + every other host the snapshot shows impacted
 * (see isImpacted: down by its own reports, silent past THRESHOLD_SUSPECT_AGE, fenced, forced down by
 * someone else) + the hosts of open incidents Nova does not list. A host admitted by one is not
 * deferred by the other on the same snapshot for a count that differs.
 * @param actingHosts the hosts acted on, as Nova names them (`host` of their compute service)
 */
export function judgeAggregateLimits(
  snapshot: GateSnapshot,
  actingHosts: ReadonlyArray<string>,
): AggregateLimitResult {
  const acting = new Set(actingHosts.map(shortHostname));
  const alreadyImpacted = new Set<string>();
  for (const host of impactedHosts(snapshot)) alreadyImpacted.add(shortHostname(host));
  for (const host of impactedIncidentHosts(snapshot)) alreadyImpacted.add(host);
  for (const host of acting) alreadyImpacted.delete(host);
  return evaluateAggregateLimits({
    failedHosts: actingHosts,
    inFlightShortHosts: alreadyImpacted,
    aggregates: snapshot.aggregates ?? [],
    tag: snapshot.config.evacuableTag,
  });
}
