import { hostsInEvacuableAggregates } from '@lifeguard/instance-ha';
import type { Aggregate, ComputeService } from '@lifeguard/openstack';

/**
 * The reserved-host pool (docs/instance-ha-rules.md#reserved-hosts): nova-compute services whose `status` is
 * disabled and whose `disabled_reason` contains `reserved` (case-sensitive, InstanceHA's rule; it
 * covers lifeguard's `lifeguard-reserved:` and InstanceHA's `instanceha-reserved:` markers and an
 * operator's own wording). lifeguard also leaves out spares that are `down` or `forced_down` (they
 * could host nothing) and the failed host itself. Listing order is kept: the first match wins.
 */
export function reservedHostPool(
  services: ReadonlyArray<ComputeService>,
  failedHost: string,
): ComputeService[] {
  return services.filter(
    (service) =>
      service.binary === 'nova-compute' &&
      service.host !== failedHost &&
      service.status.includes('disabled') &&
      (service.disabled_reason ?? '').includes('reserved') &&
      service.state !== 'down' &&
      service.forced_down !== true,
  );
}

export interface ReservedHostMatching {
  /** TAGGED_AGGREGATES: match by aggregates; otherwise by availability zone. */
  readonly taggedAggregates: boolean;
  /** EVACUABLE_TAG. */
  readonly tag: string;
  /** Every aggregate (tagged or not), from `GET /os-aggregates`. */
  readonly aggregates: ReadonlyArray<Pick<Aggregate, 'id' | 'hosts' | 'metadata'>>;
}

/**
 * The spares that may stand in for `failed`, in pool order (docs/instance-ha-rules.md#reserved-hosts):
 * - TAGGED_AGGREGATES=true: the spare shares at least one aggregate (any aggregate, tagged or not)
 *   with the failed host, and is itself a member of at least one evacuable aggregate;
 * - TAGGED_AGGREGATES=false: the spare's availability zone (`zone`) equals the failed host's.
 */
export function matchingReservedHosts(
  failed: Pick<ComputeService, 'host' | 'zone'>,
  pool: ReadonlyArray<ComputeService>,
  matching: ReservedHostMatching,
): ComputeService[] {
  if (!matching.taggedAggregates) {
    return pool.filter((spare) => (spare.zone ?? null) === (failed.zone ?? null));
  }
  const failedAggregates = new Set(
    matching.aggregates.filter((aggregate) => aggregate.hosts.includes(failed.host)).map(({ id }) => id),
  );
  const evacuableMembers = hostsInEvacuableAggregates(matching.aggregates, matching.tag);
  return pool.filter(
    (spare) =>
      evacuableMembers.has(spare.host) &&
      matching.aggregates.some(
        (aggregate) => failedAggregates.has(aggregate.id) && aggregate.hosts.includes(spare.host),
      ),
  );
}
