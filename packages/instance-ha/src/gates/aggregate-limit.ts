import type { Aggregate } from '@lifeguard/openstack';
import { isEvacuableAggregate } from '../evacuable/evacuable-tags.ts';
import { shortHostname } from '../services/short-hostname.ts';

/** Aggregate metadata key of the per-aggregate failure limit (docs/node-monitor.md, G7). */
export const AGGREGATE_MAX_FAILURES_KEY = 'instanceha:max_failures';

export interface AggregateTrip {
  readonly aggregate: string;
  readonly maxFailures: number;
  readonly impacted: number;
  /** Total hosts of the aggregate. */
  readonly total: number;
  /** This cycle's failed hosts in the aggregate (all blocked). */
  readonly hosts: ReadonlyArray<string>;
}

export interface AggregateLimitResult {
  readonly blocked: ReadonlySet<string>;
  readonly trips: ReadonlyArray<AggregateTrip>;
  /** Invalid `instanceha:max_failures` values, ignored. */
  readonly warnings: ReadonlyArray<{ aggregate: string; value: string }>;
}

/**
 * Gate G7 (docs/node-monitor.md): for every evacuable aggregate whose metadata has `instanceha:max_failures`
 * = an integer ≥ 0 (anything else is ignored with a warning): impacted = this cycle's failed hosts in
 * the aggregate + hosts already being handled (short names) in the aggregate that are not among this
 * cycle's; when impacted > max_failures, all of this cycle's failed hosts in it are blocked. A host in
 * several aggregates is blocked when any trips; 0 blocks any failure. lifeguard also counts the
 * aggregate's silent hosts (`suspectHosts`) as impacted, as THRESHOLD does.
 */
export function evaluateAggregateLimits(input: {
  readonly failedHosts: ReadonlyArray<string>;
  /** Silent hosts not failed yet (see suspectServices): counted as impacted, never blocked or admitted. */
  readonly suspectHosts?: ReadonlyArray<string>;
  readonly inFlightShortHosts: ReadonlySet<string>;
  readonly aggregates: ReadonlyArray<Aggregate>;
  readonly tag: string;
}): AggregateLimitResult {
  const blocked = new Set<string>();
  const trips: AggregateTrip[] = [];
  const warnings: Array<{ aggregate: string; value: string }> = [];
  const failedShort = new Set(input.failedHosts.map(shortHostname));
  for (const aggregate of input.aggregates) {
    if (!isEvacuableAggregate(aggregate, input.tag)) continue;
    const raw = aggregate.metadata[AGGREGATE_MAX_FAILURES_KEY];
    if (raw === undefined) continue;
    if (!/^\s*\d+\s*$/.test(raw)) {
      warnings.push({ aggregate: aggregate.name, value: raw });
      continue;
    }
    const maxFailures = Number(raw);
    const members = new Set(aggregate.hosts);
    const failedHere = input.failedHosts.filter((host) => members.has(host));
    const inFlightHere = aggregate.hosts.filter((host) => {
      const short = shortHostname(host);
      return input.inFlightShortHosts.has(short) && !failedShort.has(short);
    });
    const suspectsHere = (input.suspectHosts ?? []).filter(
      (host) => members.has(host) && !input.inFlightShortHosts.has(shortHostname(host)),
    );
    const impacted = failedHere.length + inFlightHere.length + suspectsHere.length;
    if (impacted > maxFailures && failedHere.length > 0) {
      for (const host of failedHere) blocked.add(host);
      trips.push({
        aggregate: aggregate.name,
        maxFailures,
        impacted,
        total: aggregate.hosts.length,
        hosts: failedHere,
      });
    }
  }
  return { blocked, trips, warnings };
}
