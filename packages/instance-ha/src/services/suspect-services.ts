import type { ServiceView } from './categorise.ts';

/**
 * Compute services that are silent but not failed yet: Nova still says `up`, not forced down, but no
 * report for more than `suspectAgeSeconds` (THRESHOLD_SUSPECT_AGE, DELTA ÷ 2 by default). They are
 * never admitted for fencing because of this; they only count as impacted in THRESHOLD (G6),
 * `instanceha:max_failures` (G7) and the all-services-stale breaker (G4).
 *
 * Why: hosts cut off by one partition stop reporting at the same moment, but their last reports are
 * spread over Nova's `report_interval`, so they cross DELTA over several polls. InstanceHA evaluates
 * THRESHOLD on the hosts failed in the current poll only, so a poll landing inside that window sees a
 * few of them, finds them within THRESHOLD, and fences them — the rest of the partition is blocked
 * only a poll later. Counting the silent ones lets the first poll see the partition whole, without
 * delaying the detection of a single failed host (healthy hosts report every `report_interval`).
 *
 * @param failedHosts hosts already counted as failed this cycle (left out of the result)
 * @returns the suspect services' `host` names
 */
export function suspectServices(
  services: ReadonlyArray<ServiceView>,
  failedHosts: ReadonlySet<string>,
  suspectAgeSeconds: number,
): string[] {
  const suspects: string[] = [];
  for (const service of services) {
    if (
      service.state === 'up' &&
      !service.forcedDown &&
      service.ageSeconds !== null &&
      service.ageSeconds > suspectAgeSeconds &&
      !failedHosts.has(service.host)
    )
      suspects.push(service.host);
  }
  return suspects;
}
