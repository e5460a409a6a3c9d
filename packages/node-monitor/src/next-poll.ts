import type { ServiceView } from '@lifeguard/instance-ha';
import type { Logger } from '@lifeguard/runtime';

/**
 * How long after its end a poll waits past the moment a silent compute service crosses DELTA, in
 * milliseconds: enough for `updated_at + DELTA < now` to hold on the next look at the clock.
 */
export const STALE_MARGIN_MILLISECONDS = 25;

/** A poll brought forward: when it runs, and for which host. */
export interface EarlyPoll {
  /** Just after the moment the host's compute service crosses DELTA. */
  readonly at: Date;
  /** The silent compute service's host. */
  readonly host: string;
}

/**
 * The moment to poll before POLL seconds have passed, if any: just after a silent compute service
 * crosses DELTA (`updated_at` + DELTA + STALE_MARGIN_MILLISECONDS), so a failed host is seen when it
 * becomes stale rather than up to POLL seconds later. A service counts as silent once its last
 * report is older than THRESHOLD_SUSPECT_AGE (`suspectAgeSeconds`) while Nova still says up: a
 * healthy host reports again long before, so a cloud without silent hosts is polled every POLL
 * seconds exactly as InstanceHA polls it, and at most one poll is added per silent host. Only
 * services that could become fresh failures count (enabled, not forced down, `updated_at` parsed);
 * one already stale is a failure of this poll, not of the next.
 * @returns the earliest such moment, or null when no service is silent
 */
export function earlyPoll(
  services: ReadonlyArray<ServiceView>,
  options: { deltaSeconds: number; suspectAgeSeconds: number },
): EarlyPoll | null {
  let earliest: EarlyPoll | null = null;
  for (const service of services) {
    if (service.status !== 'enabled' || service.forcedDown || service.state !== 'up') continue;
    if (service.updatedAtDate === null || service.ageSeconds === null) continue;
    if (service.ageSeconds <= options.suspectAgeSeconds || service.ageSeconds > options.deltaSeconds)
      continue;
    const at = service.updatedAtDate.getTime() + options.deltaSeconds * 1000 + STALE_MARGIN_MILLISECONDS;
    if (earliest === null || at < earliest.at.getTime()) earliest = { at: new Date(at), host: service.host };
  }
  return earliest;
}

/**
 * Seconds to wait after a poll: POLL (`pollSeconds`), or less to run an early poll on time.
 * @param nowMilliseconds the current time, epoch milliseconds
 */
export function secondsUntilNextPoll(
  pollSeconds: number,
  early: EarlyPoll | null,
  nowMilliseconds = Date.now(),
): number {
  if (early === null) return pollSeconds;
  return Math.min(pollSeconds, Math.max(0, early.at.getTime() - nowMilliseconds) / 1000);
}

/** The sooner of two early polls (either may be null). */
export function earlierPoll(first: EarlyPoll | null, second: EarlyPoll | null): EarlyPoll | null {
  if (first === null) return second;
  if (second === null) return first;
  return second.at < first.at ? second : first;
}

/** What one poll cycle did, as its closing log line says it. */
export interface CycleCompleted {
  readonly services: number;
  readonly stale: number;
  readonly durationSeconds: number;
  readonly published: number;
  readonly pollSeconds: number;
  /** The early poll the cycle asks for (a host crossing DELTA, or a host agent decision due), or null. */
  readonly early: EarlyPoll | null;
}

/** Logs a completed poll cycle with when the next one runs. @returns the seconds until then */
export function logCycleCompleted(logger: Pick<Logger, 'info'>, cycle: CycleCompleted): number {
  const nextPollSeconds = secondsUntilNextPoll(cycle.pollSeconds, cycle.early);
  const early = nextPollSeconds < cycle.pollSeconds ? cycle.early : null;
  logger.info(
    {
      services: cycle.services,
      stale: cycle.stale,
      durationSeconds: cycle.durationSeconds,
      published: cycle.published,
      nextPollSeconds,
      ...(early ? { silentHost: early.host } : {}),
    },
    `Poll cycle completed: ${cycle.services} compute services, ${cycle.stale} stale, ${cycle.durationSeconds.toFixed(3)}s duration, next poll in ${early ? `${nextPollSeconds.toFixed(3)}s (a decision on ${early.host} is due then)` : `${cycle.pollSeconds}s`}`,
  );
  return nextPollSeconds;
}
