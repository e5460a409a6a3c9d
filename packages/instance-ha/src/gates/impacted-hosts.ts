import { FENCED_STATES } from '../incidents/incident.ts';
import type { ServiceView } from '../services/categorise.ts';
import type { GateSnapshot } from './gate-snapshot.ts';
import { judgeHostReports } from './host-reports.ts';

/**
 * Whether a host counts against THRESHOLD and `instanceha:max_failures` now: while it is down in
 * Nova by its own reports (see judgeHostReports), silent for more than THRESHOLD_SUSPECT_AGE, or held
 * fenced by lifeguard (an open incident with a fence record, `fenced` or `evacuating`), or forced down
 * with no open lifeguard incident (an operator's or InstanceHA's force-down: what Nova shows). A host
 * that is up and reporting does not count because of a lifeguard incident still open for it (a failed
 * fence of a host that came back, an evacuated host back up and waiting for its re-enable).
 */
export function isImpacted(service: ServiceView, snapshot: GateSnapshot): boolean {
  const incident = snapshot.openIncidents.get(service.shortHost);
  if (incident?.fence != null && FENCED_STATES.has(incident.state) && incident.state !== 'evacuated')
    return true;
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
