import { INSTANCE_HA_CONSTANTS } from '../../config/derived.ts';
import type { ServiceView } from '../../services/categorise.ts';

export interface AllServicesStaleResult {
  /** True when the cycle must be skipped: the data source is suspect. */
  readonly tripped: boolean;
  /** Services neither disabled nor forced down. */
  readonly active: number;
  /** The active services that look failed: past DELTA, or silent (suspects). */
  readonly failed: number;
  /** Their hosts, as Nova names them. */
  readonly failedHosts: ReadonlyArray<string>;
}

/**
 * Gate G4 (docs/instance-ha-rules.md#g4-all-services-stale): when at least 3 services are active
 * (neither disabled nor forced down) and every one of them looks failed, Nova's database or message
 * bus is more likely broken than every host, so nothing is fenced this cycle. Two-node clouds are
 * exempt. Only active services are counted among the failed, so the count never exceeds the
 * active ones (a silent disabled host, a reserved host say, is neither).
 * @param failedHosts the cycle's failed hosts still in the running and its suspects
 */
export function allServicesStale(
  services: ReadonlyArray<ServiceView>,
  failedHosts: ReadonlyArray<string>,
): AllServicesStaleResult {
  // One pass, and no look-up at all in the usual cycle where nothing looks failed: at 10,000
  // services this gate runs every POLL seconds.
  const looksFailed = new Set(failedHosts);
  let active = 0;
  const failed: string[] = [];
  for (const service of services) {
    if (service.status === 'disabled' || service.forcedDown) continue;
    active++;
    if (looksFailed.size > 0 && looksFailed.has(service.host)) failed.push(service.host);
  }
  const tripped = active >= INSTANCE_HA_CONSTANTS.allServicesStaleMinimumActive && failed.length >= active;
  return { tripped, active, failed: failed.length, failedHosts: failed };
}
