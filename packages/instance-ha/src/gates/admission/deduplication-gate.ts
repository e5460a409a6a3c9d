import type { Incident } from '../../incidents/incident.ts';
import type { FreshFailure, ServiceView } from '../../services/categorise.ts';

/** A host that goes on through the gates, with the open incident it already has (or null). */
export interface Candidate<Item> {
  readonly item: Item;
  readonly incident: Incident | null;
}

export interface DeduplicationInput {
  readonly freshFailures: ReadonlyArray<FreshFailure>;
  readonly resumeCandidates: ReadonlyArray<ServiceView>;
  /** lifeguard's open incidents by short hostname (from Redis: every monitor replica sees them). */
  readonly openIncidents: ReadonlyMap<string, Incident>;
  readonly now: Date;
  /** InstanceHA's processing expiry (docs/instance-ha-rules.md#constants), in seconds. */
  readonly processingExpirySeconds: number;
  /** This leader's fencing token, or null/absent when unknown (nothing is announced again then). */
  readonly leaderFencingToken?: number | null;
}

export interface DroppedHost {
  readonly host: string;
  readonly incidentId: string;
  readonly reason: 'incident-open' | 'incident-failed' | 'resume-in-progress';
}

export interface DeduplicationResult {
  readonly fresh: ReadonlyArray<Candidate<FreshFailure>>;
  readonly resume: ReadonlyArray<Candidate<ServiceView>>;
  readonly dropped: ReadonlyArray<DroppedHost>;
}

/**
 * Whether `host.down` must be published (again) for an open incident by the leader holding
 * `leaderFencingToken`: it never was, or (still `open`: nobody started fencing) only under an older
 * leader's token, which the fencing worker drops once a newer token was issued
 * (docs/failure-modes.md#partitions-between-lifeguards-own-machines). Without a token, only a
 * never-published incident needs it.
 */
export function needsAnnouncement(incident: Incident, leaderFencingToken: number | null = null): boolean {
  if (incident.publishCount === 0) return true;
  if (leaderFencingToken === null || incident.state !== 'open') return false;
  return (incident.lastPublishedFencingToken ?? incident.fencingToken) < leaderFencingToken;
}

const olderThan = (timestamp: string | null, now: Date, seconds: number): boolean =>
  timestamp === null || now.getTime() - Date.parse(timestamp) > seconds * 1000;

/**
 * Gate G0 (docs/instance-ha-rules.md#g0-de-duplication): drop hosts that are already being handled. InstanceHA keeps in-flight hosts
 * in process memory; lifeguard uses the open incidents in Redis, so a restarted or second monitor sees
 * them too. A fresh failure with an open incident is dropped, unless `host.down` was never published
 * for it (a publish failed) or only by a deposed leader (`needsAnnouncement`): then it goes on with the
 * same incident (nothing lost). A resume candidate
 * with an open incident goes on only when nothing happened to the incident for the processing expiry
 * (InstanceHA's expiry of `hosts_processing` entries), so a stalled resume is published again.
 */
export function deduplicate(input: DeduplicationInput): DeduplicationResult {
  const fresh: Array<Candidate<FreshFailure>> = [];
  const resume: Array<Candidate<ServiceView>> = [];
  const dropped: DroppedHost[] = [];
  for (const failure of input.freshFailures) {
    const incident = input.openIncidents.get(failure.service.shortHost) ?? null;
    if (incident === null) fresh.push({ item: failure, incident: null });
    else if (incident.state === 'failed') {
      dropped.push({ host: failure.service.host, incidentId: incident.id, reason: 'incident-failed' });
    } else if (needsAnnouncement(incident, input.leaderFencingToken ?? null))
      fresh.push({ item: failure, incident });
    else dropped.push({ host: failure.service.host, incidentId: incident.id, reason: 'incident-open' });
  }
  for (const service of input.resumeCandidates) {
    const incident = input.openIncidents.get(service.shortHost) ?? null;
    if (incident === null) {
      resume.push({ item: service, incident: null });
      continue;
    }
    const stalled =
      incident.publishCount === 0 ||
      (olderThan(incident.lastPublishedAt, input.now, input.processingExpirySeconds) &&
        olderThan(incident.updatedAt, input.now, input.processingExpirySeconds));
    if (stalled && incident.state !== 'failed') resume.push({ item: service, incident });
    else dropped.push({ host: service.host, incidentId: incident.id, reason: 'resume-in-progress' });
  }
  return { fresh, resume, dropped };
}
