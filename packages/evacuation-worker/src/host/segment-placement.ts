import type { TargetHostUse } from '@lifeguard/contracts';
import { type PlacementDirective, parseDisabledReason, shortHostname } from '@lifeguard/instance-ha';
import type { ComputeService } from '@lifeguard/openstack';

/** A reserved host of the segment that cannot take servers now, and why. */
export interface UnusableReservedHost {
  readonly host: string;
  readonly why: string;
}

/** How the evacuation of a host of a Masakari segment places its servers (docs/migrating-from-masakari.md#recovery-methods). */
export interface SegmentPlacement {
  /** The segment's reserved hosts that can take servers now, in the directive's order. */
  readonly candidates: ReadonlyArray<ComputeService>;
  readonly unusable: ReadonlyArray<UnusableReservedHost>;
  /** How the instances' requests use the reserved host; null: none is used (`auto`). */
  readonly use: TargetHostUse | null;
  /**
   * When the reserved host is put into service: `plan` (enabled before the first evacuate:
   * reserved_host, rh_priority) or `first-use` (held, enabled only for a server the scheduler could
   * not place: auto_priority).
   */
  readonly enable: 'plan' | 'first-use';
  /** With no usable reserved host: `scheduler` (evacuate without a target) or `refuse` (evacuate nothing). */
  readonly withoutReservedHost: 'scheduler' | 'refuse';
}

const USE: Readonly<Record<PlacementDirective['method'], TargetHostUse | null>> = {
  auto: null,
  reserved_host: 'every-attempt',
  rh_priority: 'then-scheduler',
  auto_priority: 'after-scheduler',
};

/** The marker kinds lifeguard (or InstanceHA) writes on a host it took out of service after a failure. */
const TAKEN_OUT = new Set(['evacuating', 'complete', 'failed', 'process-stopped']);

/**
 * Why a reserved host of the segment cannot take servers now, or null when it can: its nova-compute
 * service must be listed, `up` and not `forced_down`, and not the failed host. Enabled or disabled
 * with any reason of the operator's (Masakari's operators keep reserved hosts disabled, with their own
 * words) are both fine; disabled by lifeguard or InstanceHA after a failure of its own (evacuation,
 * complete, FAILED, process-stopped markers) is not. A pure function.
 */
export function reservedHostUnusable(
  name: string,
  service: ComputeService | null,
  failedHost: string,
): string | null {
  if (shortHostname(name) === shortHostname(failedHost)) return 'it is the failed host';
  if (service === null) return 'Nova lists no nova-compute service for it';
  if (service.forced_down === true) return 'its compute service is forced down';
  if (service.state !== 'up') return `its compute service is ${service.state ?? 'of unknown state'}`;
  if (!service.status.includes('disabled')) return null;
  const marker = parseDisabledReason(service.disabled_reason);
  if (TAKEN_OUT.has(marker.kind))
    return `it was taken out of service after a failure (${service.disabled_reason})`;
  return null;
}

/** The nova-compute service of `name` in the listing: the same host name, else the same short hostname. */
export function serviceNamed(services: ReadonlyArray<ComputeService>, name: string): ComputeService | null {
  const computes = services.filter((service) => service.binary === 'nova-compute');
  return (
    computes.find((service) => service.host === name) ??
    computes.find((service) => shortHostname(service.host) === shortHostname(name)) ??
    null
  );
}

/**
 * The segment's placement of a failed host's servers, from its directive and Nova's nova-compute
 * services now (docs/migrating-from-masakari.md#recovery-methods): which of the segment's reserved
 * hosts can take servers (reservedHostUnusable), in the directive's order (Masakari's), and what the
 * method does with them and without them:
 * - `auto`: no reserved host; the scheduler;
 * - `reserved_host`: the first usable one, enabled first, the target of every request; none usable:
 *   nothing is evacuated (Masakari's "No reserved_hosts available for evacuation");
 * - `rh_priority`: the first usable one, enabled first, the target of the first request, then the
 *   scheduler; none usable: the scheduler;
 * - `auto_priority`: the scheduler first; the first usable one is held and enabled only for a server
 *   the scheduler could not place; none usable: the scheduler.
 * A pure function.
 */
export function segmentPlacement(input: {
  readonly directive: Pick<PlacementDirective, 'method' | 'reservedHosts'>;
  readonly failedHost: string;
  readonly services: ReadonlyArray<ComputeService>;
}): SegmentPlacement {
  const { method } = input.directive;
  const use = USE[method];
  const candidates: ComputeService[] = [];
  const unusable: UnusableReservedHost[] = [];
  if (use !== null) {
    for (const name of input.directive.reservedHosts) {
      const service = serviceNamed(input.services, name);
      const why = reservedHostUnusable(name, service, input.failedHost);
      if (why === null && service !== null) candidates.push(service);
      else unusable.push({ host: name, why: why ?? 'unknown' });
    }
  }
  return {
    candidates,
    unusable,
    use,
    enable: method === 'auto_priority' ? 'first-use' : 'plan',
    withoutReservedHost: method === 'reserved_host' ? 'refuse' : 'scheduler',
  };
}
