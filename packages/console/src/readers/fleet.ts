import type { LifeguardEvent } from '@lifeguard/contracts';
import {
  type AggregateHeadroom,
  aggregateLimitHeadroom,
  INSTANCE_HA_KEYS,
  type InstanceHaConfig,
  isEvacuableAggregate,
  type ThresholdResult,
  thresholdOfServiceListing,
} from '@lifeguard/instance-ha';
import type { Aggregate, ComputeService } from '@lifeguard/openstack';
import {
  type FencingFacts,
  type HostView,
  hostViewsOf,
  lastHeartbeats,
  readFencingFacts,
} from '@lifeguard/operator-views';
import { LeaderLease, type LeaseHolder, nodeMonitorLeaderKey } from '@lifeguard/runtime';
import type { ConsoleConnections } from '../connections.ts';
import { type Seen, see } from './seen.ts';

/**
 * THRESHOLD now, over Nova's listing, every evacuable aggregate's `instanceha:max_failures` over the
 * same impacted hosts, and how many more hosts may fail before fencing stops.
 */
export interface ThresholdHeadroom extends ThresholdResult {
  readonly thresholdPercent: number;
  /** Each evacuable aggregate with a valid `instanceha:max_failures` (none without TAGGED_AGGREGATES). */
  readonly aggregateLimits: ReadonlyArray<AggregateHeadroom>;
  /**
   * More hosts that may fail before a gate stops fencing: the smallest of THRESHOLD's (the largest n
   * with (impacted + n) ÷ total × 100 ≤ THRESHOLD, less the impacted) and each aggregate's
   * (max_failures − impacted); 0 when blocked.
   */
  readonly headroom: number;
  /** The aggregate whose `instanceha:max_failures` sets the headroom, or null when THRESHOLD does. */
  readonly boundBy: string | null;
}

/**
 * The headroom of a THRESHOLD result together with the aggregates' `instanceha:max_failures`: the
 * smallest wins, THRESHOLD on a tie (see ThresholdHeadroom.headroom).
 */
export function combinedHeadroom(
  result: ThresholdResult,
  thresholdPercent: number,
  aggregateLimits: ReadonlyArray<AggregateHeadroom>,
): Pick<ThresholdHeadroom, 'headroom' | 'boundBy'> {
  let headroom = thresholdHeadroom(result, thresholdPercent);
  let boundBy: string | null = null;
  for (const limit of aggregateLimits) {
    if (limit.headroom < headroom) {
      headroom = limit.headroom;
      boundBy = limit.aggregate;
    }
  }
  return { headroom, boundBy };
}

/** One compute host as the fleet page shows it. */
export interface FleetHost extends HostView {
  /** Aggregates the host belongs to (Nova's names). */
  readonly aggregates: ReadonlyArray<string>;
  /** Why lifeguard protects it (`aggregate <name>`, `every host (TAGGED_AGGREGATES off)`), or null when not. */
  readonly protectedBy: string | null;
  /** For a host whose fence is not proven yet: its fence job and own reports, behind the advice. */
  readonly fencingFacts?: FencingFacts;
}

/** Everything the fleet page shows; each source may be unseen with its reason. */
export interface FleetView {
  /** Nova's compute hosts; shown even when Redis cannot be read (their incidents are then unknown). */
  readonly hosts: Seen<FleetHost[]>;
  /** How many incidents are open, or why they could not be read (Redis down). */
  readonly openIncidents: Seen<number>;
  readonly aggregates: Seen<Aggregate[]>;
  readonly threshold: Seen<ThresholdHeadroom>;
  readonly leader: Seen<LeaseHolder | null>;
  readonly instanceHa: Seen<InstanceHaConfig>;
  /** The newest `threshold.exceeded` and `admission.blocked` events (newest first, at most GATE_EVENTS_SHOWN). */
  readonly gates: Seen<LifeguardEvent[]>;
}

/** How many gate events (THRESHOLD and the other admission gates) the fleet page lists. */
export const GATE_EVENTS_SHOWN = 10;

/** Largest number of further failures THRESHOLD still admits (see ThresholdHeadroom.headroom). */
export function thresholdHeadroom(result: ThresholdResult, thresholdPercent: number): number {
  if (result.blocked || result.total === 0) return 0;
  return Math.max(Math.floor((thresholdPercent * result.total) / 100) - result.impacted, 0);
}

/** Why a host is protected: the evacuable aggregates it is in, or every host without TAGGED_AGGREGATES. */
export function protection(
  host: string,
  aggregates: ReadonlyArray<Aggregate>,
  config: Pick<InstanceHaConfig, 'taggedAggregates' | 'evacuableTag'>,
): string | null {
  if (!config.taggedAggregates) return 'every host (TAGGED_AGGREGATES off)';
  const evacuable = aggregates.filter(
    (aggregate) => aggregate.hosts.includes(host) && isEvacuableAggregate(aggregate, config.evacuableTag),
  );
  return evacuable.length > 0 ? evacuable.map((aggregate) => `aggregate ${aggregate.name}`).join(', ') : null;
}

/**
 * The evacuable aggregates' hosts THRESHOLD counts with TAGGED_AGGREGATES (null: every host), as the
 * evacuation worker scopes its own re-check.
 */
function thresholdScope(aggregates: ReadonlyArray<Aggregate>, config: InstanceHaConfig): Set<string> | null {
  if (!config.taggedAggregates) return null;
  const scope = new Set(
    aggregates
      .filter((aggregate) => isEvacuableAggregate(aggregate, config.evacuableTag))
      .flatMap((aggregate) => aggregate.hosts),
  );
  return scope.size === 0 ? null : scope;
}

/**
 * Reads the fleet: Nova's compute services with their markers and open incidents (`hostViewsOf`, as
 * `lifeguard hosts`; without Redis the hosts still show, their incidents unknown), the aggregates,
 * THRESHOLD over the same listing, and the node monitors' lease.
 */
export async function readFleet(
  connections: ConsoleConnections,
  instanceHa: Seen<InstanceHaConfig>,
): Promise<FleetView> {
  const seconds = connections.config.LIFEGUARD_CONSOLE_READ_TIMEOUT_SECONDS;
  const [services, aggregates, leader, gates, open, heartbeats] = await Promise.all([
    see('Nova', seconds, () => connections.openstack().compute.listServices({ binary: 'nova-compute' })),
    see('Nova (aggregates)', seconds, () => connections.openstack().compute.listAggregates()),
    see('Redis', seconds, async () =>
      LeaderLease.read(await connections.redis(), nodeMonitorLeaderKey(connections.keyPrefix)),
    ),
    see('Redis', seconds, async () =>
      (await (await connections.journal()).recent(500))
        .filter((event) => event.type === 'threshold.exceeded' || event.type === 'admission.blocked')
        .reverse()
        .slice(0, GATE_EVENTS_SHOWN),
    ),
    see('Redis', seconds, async () => (await connections.incidents()).openByShortHost()),
    see('Redis', seconds, async () => lastHeartbeats(await connections.redis(), connections.keyPrefix)),
  ]);
  const known = aggregates.ok ? aggregates.value : [];
  const hosts: Seen<FleetHost[]> = services.ok
    ? {
        ok: true,
        value: await Promise.all(
          hostViewsOf(
            services.value,
            open.ok ? open.value : null,
            heartbeats.ok ? heartbeats.value : null,
          ).map(async (view) => ({
            ...view,
            aggregates: known
              .filter((aggregate) => aggregate.hosts.includes(view.host))
              .map((each) => each.name),
            protectedBy: instanceHa.ok ? protection(view.host, known, instanceHa.value) : null,
            fencingFacts: await hostFencingFacts(connections, view, instanceHa),
          })),
        ),
      }
    : services;
  return {
    hosts,
    openIncidents: open.ok ? { ok: true, value: open.value.size } : open,
    aggregates,
    leader,
    instanceHa,
    gates,
    threshold: thresholdOf(services, aggregates, instanceHa),
  };
}

/** The facts behind a host's fencing advice (none needed, or unreadable: `{}`). */
async function hostFencingFacts(
  connections: ConsoleConnections,
  view: HostView,
  instanceHa: Seen<InstanceHaConfig>,
): Promise<FencingFacts> {
  if (!view.incident) return {};
  const redis = await connections.redis().catch(() => null);
  if (redis === null) return {};
  return readFencingFacts(
    { redis, keyPrefix: connections.keyPrefix, compute: () => connections.openstack().compute },
    { ...view.incident, host: view.host },
    instanceHa.ok ? instanceHa.value.deltaSeconds : INSTANCE_HA_KEYS.DELTA.default,
  );
}

function thresholdOf(
  services: Seen<ComputeService[]>,
  aggregates: Seen<Aggregate[]>,
  instanceHa: Seen<InstanceHaConfig>,
): Seen<ThresholdHeadroom> {
  if (!services.ok) return services;
  if (!instanceHa.ok) return instanceHa;
  const config = instanceHa.value;
  const result = thresholdOfServiceListing(
    services.value,
    config,
    aggregates.ok ? thresholdScope(aggregates.value, config) : null,
  );
  return { ok: true, value: thresholdHeadroomOf(result, config, aggregates.ok ? aggregates.value : null) };
}

/**
 * THRESHOLD's result with the aggregates' `instanceha:max_failures` over the same impacted hosts, as
 * the aggregate gate applies them: only with TAGGED_AGGREGATES and a successful aggregate list.
 */
export function thresholdHeadroomOf(
  result: ThresholdResult,
  config: Pick<InstanceHaConfig, 'thresholdPercent' | 'taggedAggregates' | 'evacuableTag'>,
  aggregates: ReadonlyArray<Aggregate> | null,
): ThresholdHeadroom {
  const aggregateLimits =
    config.taggedAggregates && aggregates !== null
      ? aggregateLimitHeadroom({ impactedHosts: result.impactedHosts, aggregates, tag: config.evacuableTag })
      : [];
  return {
    ...result,
    thresholdPercent: config.thresholdPercent,
    aggregateLimits,
    ...combinedHeadroom(result, config.thresholdPercent, aggregateLimits),
  };
}
