import {
  type DisabledReasonMarker,
  type Incident,
  type IncidentStore,
  parseDisabledReason,
  shortHostname,
} from '@lifeguard/instance-ha';
import type { ComputeApi, ComputeService } from '@lifeguard/openstack';
import type { RedisClient } from '@lifeguard/runtime';
import { lastHeartbeats } from './host-reporting.ts';

/** A compute service with its parsed `disabled_reason` marker and lifeguard's open incident. */
export interface HostView {
  readonly host: string;
  readonly serviceId: string;
  readonly zone: string | null;
  readonly status: string;
  readonly state: string | null;
  readonly forcedDown: boolean;
  readonly updatedAt: string | null;
  /**
   * The last heartbeat of the host's agent the node monitors accepted (ISO 8601), or null when none is
   * recorded (no host agent, or none heard lately) or the record could not be read.
   */
  readonly lastHeartbeat: string | null;
  readonly disabledReason: string | null;
  readonly marker: DisabledReasonMarker;
  readonly incident: (Pick<Incident, 'id' | 'state' | 'openedAt'> & { readonly fenced: boolean }) | null;
}

/**
 * Joins Nova's `nova-compute` services with their markers, open incidents and the host agents' last
 * accepted heartbeats (from `heartbeats`, when given), sorted by host.
 */
export async function hostViews(
  compute: ComputeApi,
  incidents: IncidentStore,
  heartbeats?: { redis: RedisClient; keyPrefix: string },
): Promise<HostView[]> {
  const [services, open, heard] = await Promise.all([
    compute.listServices({ binary: 'nova-compute' }),
    incidents.openByShortHost(),
    heartbeats ? lastHeartbeats(heartbeats.redis, heartbeats.keyPrefix) : null,
  ]);
  return hostViewsOf(services, open, heard);
}

/**
 * The host views of Nova's `nova-compute` services, with the open incidents by short host name (null
 * when they could not be read: every view then has `incident` null) and the last heartbeats by short
 * host name (null or absent: `lastHeartbeat` null), sorted by host. Pure.
 */
export function hostViewsOf(
  services: ReadonlyArray<ComputeService>,
  open: ReadonlyMap<string, Incident> | null,
  heartbeats: ReadonlyMap<string, Date> | null = null,
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
        lastHeartbeat: heartbeats?.get(shortHostname(service.host))?.toISOString() ?? null,
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
