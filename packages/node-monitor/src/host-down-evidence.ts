import type { HostDownEvidence } from '@lifeguard/contracts';
import type { ServiceView } from '@lifeguard/instance-ha';

/**
 * The evidence of `host.down`: what Nova reported and how old it was (contracts HostDownEvidence),
 * and for a host the host agent channel failed (HEARTBEAT_DETECTION) the silence rule's words.
 */
export function evidenceOf(service: ServiceView, hostAgentSilence?: string): HostDownEvidence {
  return {
    ...(hostAgentSilence === undefined ? {} : { hostAgentSilence }),
    serviceId: service.id,
    state: service.state,
    status: service.status,
    forcedDown: service.forcedDown,
    updatedAt: service.updatedAtDate?.toISOString() ?? null,
    ageSeconds: service.ageSeconds === null ? null : Math.round(service.ageSeconds * 1000) / 1000,
    disabledReason: service.disabledReason,
    zone: service.zone,
  };
}
