import type { HostUnavailability } from '@lifeguard/contracts';
import type { ServiceView } from '../services/categorise.ts';
import { shortHostname } from '../services/short-hostname.ts';
import type { GateJudgement } from './gate.ts';
import type { GateSnapshot } from './gate-snapshot.ts';
import { judgeHostReports } from './host-reports.ts';

/** What the capacity gate knows besides the snapshot: the failed host's servers that would move. */
export interface CapacityFacts {
  /** Servers of the host that its evacuation would take (selectInstances: evacuable status, no exclusion, tags). */
  readonly serversToMove: ReadonlyArray<{ readonly id: string; readonly name: string }>;
  /** RESERVED_HOSTS: a spare (disabled with a `reserved` marker, up) counts as room. */
  readonly reservedHosts: boolean;
}

/** Why another compute service cannot take servers now, in the words of the event. */
type Unavailable = HostUnavailability;

/** The capacity gate's judgement, with the hosts that can take servers and why each other cannot. */
export interface CapacityJudgement extends GateJudgement {
  readonly verdict: 'pass' | 'defer';
  /** Compute hosts that can take the servers now (enabled or a usable spare, up, not forced down). */
  readonly candidates: ReadonlyArray<string>;
  /** Every other compute host and why it cannot take servers now. */
  readonly unavailable: ReadonlyArray<{ readonly host: string; readonly why: Unavailable }>;
  readonly serverCount: number;
}

function unavailability(
  service: ServiceView,
  snapshot: GateSnapshot,
  reservedHosts: boolean,
): Unavailable | null {
  if (snapshot.openIncidents.has(service.shortHost)) return 'being recovered';
  if (service.forcedDown) return 'forced down';
  if (!judgeHostReports(service, snapshot.config.deltaSeconds).reporting) return 'down';
  if (service.status === 'enabled') return null;
  return reservedHosts && service.marker.kind === 'reserved' ? null : 'disabled';
}

/**
 * Capacity before fencing (docs/instance-ha-rules.md#capacity-before-fencing): a failed host whose
 * servers would have nowhere to go is not powered off. The servers can go somewhere when at least one
 * other compute service reports to Nova (by its own reports, see judgeHostReports), is not forced
 * down, has no open incident, and is enabled — or, with RESERVED_HOSTS, is a spare that lifeguard
 * would enable for it. Sizes are left to Nova's scheduler: allocation ratios and reserved figures live
 * in Placement, and a count from the hypervisor listing would refuse fences Nova would place.
 * - nothing to move: pass (the host's fence is not about its servers);
 * - a candidate: pass, naming them;
 * - none: defer, naming every other host and why it cannot take servers; looked at again every POLL.
 * Pure.
 */
export function judgeCapacity(snapshot: GateSnapshot, host: string, facts: CapacityFacts): CapacityJudgement {
  const failed = shortHostname(host);
  const others = snapshot.services.filter((service) => service.shortHost !== failed);
  const candidates: string[] = [];
  const unavailable: Array<{ host: string; why: Unavailable }> = [];
  for (const service of others) {
    const why = unavailability(service, snapshot, facts.reservedHosts);
    if (why === null) candidates.push(service.host);
    else unavailable.push({ host: service.host, why });
  }
  const serverCount = facts.serversToMove.length;
  const base = { gate: 'capacity', candidates, unavailable, serverCount };
  if (serverCount === 0) return { ...base, verdict: 'pass', reason: `${host} has no server to evacuate` };
  if (candidates.length > 0)
    return {
      ...base,
      verdict: 'pass',
      reason: `${candidates.length} compute host(s) can take the ${serverCount} server(s) of ${host}: ${candidates.slice(0, 5).join(', ')}${candidates.length > 5 ? ', ...' : ''}`,
    };
  const counts = new Map<Unavailable, number>();
  for (const each of unavailable) counts.set(each.why, (counts.get(each.why) ?? 0) + 1);
  const summary = [...counts].map(([why, count]) => `${count} ${why}`).join(', ');
  return {
    ...base,
    verdict: 'defer',
    reason:
      others.length === 0
        ? `no other compute host exists to take the ${serverCount} server(s) of ${host}`
        : `no compute host can take the ${serverCount} server(s) of ${host}: of ${others.length} other compute host(s), ${summary}${facts.reservedHosts ? '' : ' (RESERVED_HOSTS is off: spares do not count)'}`,
  };
}
