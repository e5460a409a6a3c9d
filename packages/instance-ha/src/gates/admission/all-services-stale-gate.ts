import { INSTANCE_HA_CONSTANTS } from '../../config/derived.ts';
import type { ServiceView } from '../../services/categorise.ts';

export interface AllServicesStaleResult {
  /** True when the cycle must be skipped: the data source is suspect. */
  readonly tripped: boolean;
  /** Services neither disabled nor forced down. */
  readonly active: number;
  readonly failed: number;
}

/**
 * Gate G4 (docs/instance-ha-rules.md#g4-all-services-stale): when at least 3 services are active (neither disabled nor forced down) and
 * the remaining failures are at least as many as the active services, every service looks failed —
 * Nova's database or message bus is more likely broken than every host, so nothing is fenced this
 * cycle. Two-node clouds are exempt.
 */
export function allServicesStale(
  services: ReadonlyArray<ServiceView>,
  remainingFailures: number,
): AllServicesStaleResult {
  const active = services.filter((service) => service.status !== 'disabled' && !service.forcedDown).length;
  const tripped =
    active >= INSTANCE_HA_CONSTANTS.allServicesStaleMinimumActive && remainingFailures >= active;
  return { tripped, active, failed: remainingFailures };
}
