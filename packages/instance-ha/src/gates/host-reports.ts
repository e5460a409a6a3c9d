import type { ServiceView } from '../services/categorise.ts';

/** What a compute service's own reports say about its host right now. */
export interface HostReports {
  /** True while nova-compute keeps reporting: its host is up and must not be fenced or evacuated. */
  readonly reporting: boolean;
  /** Seconds since the service's last report (`updated_at`), or null when Nova gave none. */
  readonly ageSeconds: number | null;
  /** The evidence in words, e.g. `state up, updated_at 3 s ago (DELTA 30 s)`. */
  readonly evidence: string;
}

/**
 * Judges a host by its own reports, never by a `forced_down` that someone (lifeguard included) set.
 *
 * - not forced down: the host is down when Nova says `state: down` or its `updated_at` is older than
 *   DELTA (the node monitor's fresh-failure rule, see categoriseServices); else it is reporting.
 * - forced down: Nova then always says `down`, whatever the host does, so only `updated_at` counts:
 *   reporting while it is at most DELTA old. nova-compute keeps writing `updated_at` while forced
 *   down; note that Nova also moves `updated_at` when the service record is changed through the API
 *   (lifeguard's own `forced_down` and disable write it), so a fresh `updated_at` right after such a
 *   write is not proof of a report.
 * - no parsable `updated_at`: reporting only when Nova says up and nobody forced it down.
 *
 * @param service the service as categorised at the time of the check (its `ageSeconds` is relative
 *   to that time)
 * @param deltaSeconds DELTA, seconds
 */
export function judgeHostReports(service: ServiceView, deltaSeconds: number): HostReports {
  const age = service.ageSeconds;
  const ageText = age === null ? 'no updated_at' : `updated_at ${Math.round(age)} s ago`;
  const forced = service.forcedDown ? ', forced_down' : '';
  const evidence = `state ${service.state}${forced}, ${ageText} (DELTA ${deltaSeconds} s)`;
  const fresh = age !== null && age <= deltaSeconds;
  const reporting = service.forcedDown ? fresh : service.state === 'up' && (age === null || fresh);
  return { reporting, ageSeconds: age, evidence };
}
