import type { Aggregate, Server } from '@lifeguard/openstack';
import type { InstanceHaConfig } from '../../config/instance-ha-config.ts';
import {
  type EvacuabilityContext,
  filterHostsByEvacuableAggregates,
  isServerEvacuable,
} from '../../evacuable/evacuable-tags.ts';
import type { ServiceView } from '../../services/categorise.ts';

/** Why gate G5 dropped a host. */
export type NotEvacuableReason = 'no-servers' | 'no-evacuable-servers' | 'not-in-evacuable-aggregate';

export interface EvacuabilityResult {
  readonly kept: ReadonlyArray<ServiceView>;
  readonly dropped: ReadonlyArray<{ service: ServiceView; reason: NotEvacuableReason }>;
}

/** What G5 reads about the cycle's failed hosts: their servers, the tagging context, the aggregates. */
export interface EvacuabilityFacts {
  /** Each failed host's servers (`all_tenants`), or null when the list failed (the host is kept). */
  readonly servers: ReadonlyMap<string, ReadonlyArray<Server> | null>;
  /** The evacuable images and flavors as last read. */
  readonly context: EvacuabilityContext;
  /** Nova's aggregates with TAGGED_AGGREGATES, or null (not tagged, or the list failed: no filtering). */
  readonly aggregates: ReadonlyArray<Aggregate> | null;
}

type Settings = Pick<
  InstanceHaConfig,
  'evacuableTag' | 'taggedImages' | 'taggedFlavors' | 'taggedAggregates'
>;

/**
 * Gate G5, evacuability (docs/instance-ha-rules.md#g5-evacuability, `_prepare_evacuation_resources`),
 * in order: a host with no servers is dropped (never fenced, never disabled), one whose list failed
 * is kept (fail-open); with TAGGED_IMAGES or TAGGED_FLAVORS a host is kept when at least one of its
 * servers is evacuable (fail-open when nothing is tagged); with TAGGED_AGGREGATES a host is kept when
 * it is in an evacuable aggregate (none when no aggregate is tagged: fail-closed; no filtering when
 * the aggregate list failed: fail-open).
 */
export function judgeEvacuability(
  candidates: ReadonlyArray<ServiceView>,
  facts: EvacuabilityFacts,
  settings: Settings,
): EvacuabilityResult {
  const dropped: Array<{ service: ServiceView; reason: NotEvacuableReason }> = [];
  let kept: ServiceView[] = [];
  const tagged = settings.taggedImages || settings.taggedFlavors;
  for (const service of candidates) {
    const servers = facts.servers.get(service.host) ?? null;
    if (servers !== null && servers.length === 0) dropped.push({ service, reason: 'no-servers' });
    else if (
      servers !== null &&
      tagged &&
      !servers.some((server) => isServerEvacuable(server, facts.context))
    )
      dropped.push({ service, reason: 'no-evacuable-servers' });
    else kept.push(service);
  }
  if (settings.taggedAggregates && facts.aggregates !== null) {
    const survivors = new Set(
      filterHostsByEvacuableAggregates(
        kept.map((service) => service.host),
        facts.aggregates,
        settings.evacuableTag,
      ).kept,
    );
    for (const service of kept) {
      if (!survivors.has(service.host)) dropped.push({ service, reason: 'not-in-evacuable-aggregate' });
    }
    kept = kept.filter((service) => survivors.has(service.host));
  }
  return { kept, dropped };
}
