import {
  type DisabledReasonMarker,
  type Incident,
  type IncidentStore,
  parseDisabledReason,
  shortHostname,
} from '@lifeguard/instance-ha';
import type { ComputeApi, ComputeService } from '@lifeguard/openstack';
import type { ContextProvider, LifeguardProgram } from '../command-registration.ts';
import { fencingAdvice } from '../output/fencing-advice.ts';
import { formatAge, truncate } from '../output/format.ts';
import { renderTable } from '../output/table.ts';
import { type ReenableWaitView, reenableWaitViews, renderReenableWaits } from '../queries/reenable-waits.ts';

/** A compute service with its parsed `disabled_reason` marker and lifeguard's open incident. */
export interface HostView {
  readonly host: string;
  readonly serviceId: string;
  readonly zone: string | null;
  readonly status: string;
  readonly state: string | null;
  readonly forcedDown: boolean;
  readonly updatedAt: string | null;
  readonly disabledReason: string | null;
  readonly marker: DisabledReasonMarker;
  readonly incident: (Pick<Incident, 'id' | 'state' | 'openedAt'> & { readonly fenced: boolean }) | null;
}

/** Joins Nova's `nova-compute` services with their markers and open incidents, sorted by host. */
export async function hostViews(compute: ComputeApi, incidents: IncidentStore): Promise<HostView[]> {
  const [services, open] = await Promise.all([
    compute.listServices({ binary: 'nova-compute' }),
    incidents.openByShortHost(),
  ]);
  return hostViewsOf(services, open);
}

/**
 * The host views of Nova's `nova-compute` services, with the open incidents by short host name (null
 * when they could not be read: every view then has `incident` null), sorted by host. Pure.
 */
export function hostViewsOf(
  services: ReadonlyArray<ComputeService>,
  open: ReadonlyMap<string, Incident> | null,
): HostView[] {
  return services
    .map((service: ComputeService) => {
      const incident = open?.get(shortHostname(service.host)) ?? null;
      return {
        host: service.host,
        serviceId: service.id,
        zone: service.zone ?? null,
        status: service.status,
        state: service.state ?? null,
        forcedDown: service.forced_down === true,
        updatedAt: service.updated_at ?? null,
        disabledReason: service.disabled_reason ?? null,
        marker: parseDisabledReason(service.disabled_reason),
        incident: incident
          ? {
              id: incident.id,
              state: incident.state,
              openedAt: incident.openedAt,
              fenced: incident.fence !== null,
            }
          : null,
      };
    })
    .sort((a, b) => a.host.localeCompare(b.host, 'en', { numeric: true }));
}

/** `evacuating (lifeguard, kdump)`, `reserved (operator)`, or `-`. */
export function markerText(marker: DisabledReasonMarker): string {
  if (marker.kind === 'none') return marker.origin === 'operator' ? 'other reason' : '-';
  const details = [marker.origin, marker.kdump ? 'kdump' : null, marker.recovered ? 'recovered' : null]
    .filter(Boolean)
    .join(', ');
  return `${marker.kind} (${details})`;
}

/** The human form of `lifeguard hosts`, with the advice for hosts whose fencing keeps failing. */
export function renderHosts(hosts: ReadonlyArray<HostView>, now: Date = new Date()): string {
  if (hosts.length === 0) return 'Nova lists no nova-compute service';
  const advice = hosts.flatMap((host) =>
    host.incident ? fencingAdvice({ ...host.incident, host: host.host }) : [],
  );
  const table = renderTable(
    [
      'host',
      'zone',
      'status',
      'state',
      'forced_down',
      'last report',
      'marker',
      'disabled_reason',
      'incident',
    ],
    hosts.map((host) => [
      host.host,
      host.zone,
      host.status,
      host.state,
      host.forcedDown,
      formatAge(host.updatedAt, now),
      markerText(host.marker),
      host.disabledReason ? truncate(host.disabledReason, 48) : null,
      host.incident ? `${host.incident.id} (${host.incident.state})` : null,
    ]),
  );
  return advice.length === 0 ? table : [table, '', ...advice].join('\n');
}

/** `lifeguard hosts`: Nova's compute services with state, marker and open incident. */
export function registerHostsCommand(program: LifeguardProgram, context: ContextProvider): void {
  program
    .command('hosts')
    .description(
      'each nova-compute service: status, state, forced_down, disabled_reason marker, open incident',
    )
    .option('--json', 'print JSON instead of a table')
    .action(async (options) => {
      const cli = context();
      const hosts = await hostViews(cli.openstack().compute, await cli.incidents());
      const waits = await reenableWaitViews(await cli.redis(), cli.keyPrefix);
      if (options.json) cli.printJson(withReenableWaits(hosts, waits));
      else cli.print([renderHosts(hosts), renderReenableWaits(waits)].filter(Boolean).join('\n\n'));
    });
}

/** Each host with `reenableWait`: the evacuation worker's record of Nova refusing forced_down=false, or null. */
export function withReenableWaits(
  hosts: ReadonlyArray<HostView>,
  waits: ReadonlyMap<string, ReenableWaitView>,
): Array<HostView & { reenableWait: ReenableWaitView | null }> {
  return hosts.map((host) => ({ ...host, reenableWait: waits.get(shortHostname(host.host)) ?? null }));
}
