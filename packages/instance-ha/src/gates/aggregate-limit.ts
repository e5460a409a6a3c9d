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
  /** Every host counted in `impacted`: the failed, the in-flight and the silent ones. */
  readonly impactedHosts: ReadonlyArray<string>;
}

export interface AggregateLimitResult {
  readonly blocked: ReadonlySet<string>;
  readonly trips: ReadonlyArray<AggregateTrip>;
  /** Invalid `instanceha:max_failures` values, ignored. */
  readonly warnings: ReadonlyArray<{ aggregate: string; value: string }>;
}

/**
 * An aggregate's `instanceha:max_failures`: the integer ≥ 0 it holds, null when the key is absent,
 * `invalid` for anything else (G7 ignores such a value with a warning).
 */
export function aggregateMaxFailures(aggregate: Aggregate): number | null | 'invalid' {
  const raw = aggregate.metadata[AGGREGATE_MAX_FAILURES_KEY];
  if (raw === undefined) return null;
  return /^\s*\d+\s*$/.test(raw) ? Number(raw) : 'invalid';
}

/** How many more of an aggregate's hosts may fail before its `instanceha:max_failures` blocks them. */
export interface AggregateHeadroom {
  readonly aggregate: string;
  readonly maxFailures: number;
  /** Impacted hosts of the aggregate now. */
  readonly impacted: number;
  /** Total hosts of the aggregate. */
  readonly total: number;
  /** True when impacted > max_failures: G7 blocks the aggregate's failed hosts now. */
  readonly blocked: boolean;
  /** max_failures − impacted, at least 0: further failures in the aggregate G7 still admits. */
  readonly headroom: number;
}

/**
 * G7's headroom for every evacuable aggregate with a valid `instanceha:max_failures`, given the hosts
 * impacted now (the same count evaluateAggregateLimits makes when those hosts fail this cycle).
 */
export function aggregateLimitHeadroom(input: {
  readonly impactedHosts: ReadonlyArray<string>;
  readonly aggregates: ReadonlyArray<Aggregate>;
  readonly tag: string;
}): AggregateHeadroom[] {
  const limits = evaluateAggregateLimits({
    failedHosts: input.impactedHosts,
    inFlightShortHosts: new Set(),
    aggregates: input.aggregates,
    tag: input.tag,
  });
  const tripped = new Set(limits.trips.map((trip) => trip.aggregate));
  return input.aggregates.flatMap((aggregate) => {
    const maxFailures = aggregateMaxFailures(aggregate);
    if (!isEvacuableAggregate(aggregate, input.tag) || typeof maxFailures !== 'number') return [];
    const members = new Set(aggregate.hosts);
    const impacted = input.impactedHosts.filter((host) => members.has(host)).length;
    return [
      {
        aggregate: aggregate.name,
        maxFailures,
        impacted,
        total: aggregate.hosts.length,
        blocked: tripped.has(aggregate.name),
        headroom: Math.max(maxFailures - impacted, 0),
      },
    ];
  });
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
    const maxFailures = aggregateMaxFailures(aggregate);
    if (maxFailures === null) continue;
    if (maxFailures === 'invalid') {
      warnings.push({
        aggregate: aggregate.name,
        value: aggregate.metadata[AGGREGATE_MAX_FAILURES_KEY] ?? '',
      });
      continue;
    }
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
        impactedHosts: [...failedHere, ...inFlightHere, ...suspectsHere],
      });
    }
  }
  return { blocked, trips, warnings };
}
