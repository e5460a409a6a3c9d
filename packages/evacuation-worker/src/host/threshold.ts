import type { ComputeService } from '@lifeguard/openstack';

/** The global THRESHOLD situation at evacuation time (research/instance-ha.md 1.8 G6). */
export interface ThresholdSituation {
  /** Distinct hosts whose compute service is `down` or `forced_down` (within the scope). */
  readonly impacted: number;
  /** Every nova-compute service host in the scope, disabled ones included. */
  readonly total: number;
  /** impacted ÷ total × 100 (0 when total is 0). */
  readonly percent: number;
  /** THRESHOLD in percent. */
  readonly threshold: number;
  /** True when `percent` is strictly greater than THRESHOLD. */
  readonly exceeded: boolean;
  readonly impactedHosts: ReadonlyArray<string>;
}

/**
 * Recomputes InstanceHA's global THRESHOLD rule from a fresh `os-services` listing: hosts that are
 * `down` or `forced_down` (earlier incidents included: cascade protection) over all nova-compute
 * hosts, disabled ones included; with TAGGED_AGGREGATES both sides are limited to hosts of evacuable
 * aggregates (`evacuableHosts`; null = no limit, also when the aggregate list could not be read).
 * Partial records of unreachable cells (2.69, no `state`) count in the total but never as impacted.
 * Exceeded when the percentage is strictly greater than THRESHOLD (4 hosts, 2 down = 50 % → allowed).
 */
export function thresholdSituation(
  services: ReadonlyArray<ComputeService>,
  thresholdPercent: number,
  evacuableHosts: ReadonlySet<string> | null,
): ThresholdSituation {
  const hosts = new Set<string>();
  const impacted = new Set<string>();
  for (const service of services) {
    if (service.binary !== 'nova-compute') continue;
    if (evacuableHosts !== null && !evacuableHosts.has(service.host)) continue;
    hosts.add(service.host);
    if (service.state === 'down' || service.forced_down === true) impacted.add(service.host);
  }
  const total = hosts.size;
  const percent = total === 0 ? 0 : (impacted.size / total) * 100;
  return {
    impacted: impacted.size,
    total,
    percent,
    threshold: thresholdPercent,
    exceeded: percent > thresholdPercent,
    impactedHosts: [...impacted].sort(),
  };
}
