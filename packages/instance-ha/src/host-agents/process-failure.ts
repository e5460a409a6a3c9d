import type { ServiceView } from '../services/categorise.ts';
import type { HostAgentEvidence } from './host-agent-findings.ts';

/** The watched process whose stop takes a host's compute service out of scheduling. */
export const COMPUTE_PROCESS = 'nova-compute';

/** What to do with one host's compute service after its agent's process reports. */
export interface ProcessFailureAction {
  readonly host: string;
  readonly serviceId: string;
  /** `disable`: nova-compute stopped on a live host; `enable`: it runs again under lifeguard's marker. */
  readonly action: 'disable' | 'enable';
  /** When the agent's report that decided it came. */
  readonly reportedAt: Date;
}

/**
 * Masakari's process-failure behaviour on the host agent's reports (docs/host-agent.md#nova-compute-stopped):
 * a host whose agent is heard (on any network within `downAfterSeconds`) and whose latest report, itself
 * no older than `downAfterSeconds`, says nova-compute stopped keeps its guests, so it is not fenced; but
 * Nova can no longer manage it, so its compute service, when enabled and not forced down, is disabled
 * with lifeguard's `process-stopped` marker (no new servers are scheduled there). A service disabled
 * with that marker is enabled again once such a report says nova-compute runs. A service disabled by
 * anyone else, or forced down, is never touched. A pure function of Nova's listing and the agents'
 * reports; the node monitor acts on it.
 */
export function processFailureActions(
  services: ReadonlyArray<ServiceView>,
  evidence: HostAgentEvidence,
  now: Date,
  downAfterSeconds: number,
): ProcessFailureAction[] {
  const recent = (at: Date) => now.getTime() - at.getTime() <= downAfterSeconds * 1000;
  const actions: ProcessFailureAction[] = [];
  for (const service of services) {
    if (service.forcedDown) continue;
    const heard = [...evidence.networks.values()].some((times) => {
      const at = times.get(service.shortHost);
      return at !== undefined && recent(at);
    });
    const report = evidence.processes.get(service.shortHost);
    if (!heard || report === undefined || !recent(report.at)) continue;
    const state = report.processes[COMPUTE_PROCESS];
    const base = { host: service.host, serviceId: service.id, reportedAt: report.at };
    if (state === 'stopped' && service.status === 'enabled') actions.push({ ...base, action: 'disable' });
    if (
      state === 'running' &&
      service.status === 'disabled' &&
      service.marker.kind === 'process-stopped' &&
      service.marker.origin === 'lifeguard'
    )
      actions.push({ ...base, action: 'enable' });
  }
  return actions;
}
