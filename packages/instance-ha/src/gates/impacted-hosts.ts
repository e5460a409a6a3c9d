import { FENCED_STATES } from '../incidents/incident.ts';
import type { ServiceView } from '../services/categorise.ts';
import type { GateSnapshot } from './gate-snapshot.ts';
import { judgeHostReports } from './host-reports.ts';

/**
 * Whether a host counts against THRESHOLD and `instanceha:max_failures` now: while it is down in
 * Nova by its own reports (see judgeHostReports), silent for more than THRESHOLD_SUSPECT_AGE, held
 * fenced by lifeguard (an open incident with a fence record, `fenced` or `evacuating`), fenced in an
 * open incident and still forced down (whatever its `updated_at` says), or forced down with no open
 * lifeguard incident (an operator's or InstanceHA's force-down: what Nova shows). A host that is up
 * and reporting does not count because of a lifeguard incident still open for it (a failed fence of a
 * host that came back, an evacuated host back up, its forced_down lifted, waiting for its re-enable).
 *
 * Why a fenced host that is still forced down always counts: Nova moves `updated_at` whenever the
 * service record is written through the API (docs/nova-facts.md#compute-services), and lifeguard writes
 * it after the evacuation (the `complete` marker), so for DELTA seconds such a host would look like it
 * reports and would free a place under the limit for one more failed host (docs/safety-rules.md#rule-2-no-action-over-threshold-or-while-disabled).
 */
export function isImpacted(service: ServiceView, snapshot: GateSnapshot): boolean {
  const incident = snapshot.openIncidents.get(service.shortHost);
  if (incident?.fence != null && FENCED_STATES.has(incident.state)) {
    if (incident.state !== 'evacuated' || service.forcedDown) return true;
  }
  if (service.forcedDown && incident === undefined) return true;
  if (!judgeHostReports(service, snapshot.config.deltaSeconds).reporting) return true;
  return (
    !service.forcedDown &&
    service.ageSeconds !== null &&
    service.ageSeconds > snapshot.config.thresholdSuspectAgeSeconds
  );
}

/** The `host` names of the snapshot's impacted services (see isImpacted). */
export function impactedHosts(snapshot: GateSnapshot): Set<string> {
  const impacted = new Set<string>();
  for (const service of snapshot.services) if (isImpacted(service, snapshot)) impacted.add(service.host);
  return impacted;
}

/**
 * The short hostnames of open incidents whose host is impacted now (see isImpacted), or that Nova
 * does not list: what `instanceha:max_failures` counts as already being handled. An incident still
 * open for a host that is up and reporting (a failed fence of a host that came back) is left out.
 */
export function impactedIncidentHosts(snapshot: GateSnapshot): Set<string> {
  const byShortHost = new Map(snapshot.services.map((service) => [service.shortHost, service]));
  const impacted = new Set<string>();
  for (const shortHost of snapshot.openIncidents.keys()) {
    const service = byShortHost.get(shortHost);
    if (service === undefined || isImpacted(service, snapshot)) impacted.add(shortHost);
  }
  return impacted;
}
