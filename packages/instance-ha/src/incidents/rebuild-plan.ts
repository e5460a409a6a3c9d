import type { Categorisation, ServiceView } from '../services/categorise.ts';

/** One incident to re-open from a lifeguard in-progress marker. */
export interface IncidentToRestore {
  readonly service: ServiceView;
  /** The id the marker carries, or null when it carries none (a new id is given). */
  readonly incidentId: string | null;
}

/** What the node monitor rebuilds from Nova after Redis lost its memory. */
export interface RebuildPlan {
  /**
   * Hosts forced down, down and disabled with lifeguard's in-progress marker (`lifeguard evacuation:`)
   * and no open incident: their incident is re-opened under the marker's id, as a resume, with no
   * fence record and not kdump-fenced, so the fence job re-checks the world and fences again
   * (docs/safety-rules.md#redis-memory-lost).
   */
  readonly restore: ReadonlyArray<IncidentToRestore>;
  /** Hosts whose marker says evacuated (`complete`): the re-enable rules take them as before. */
  readonly awaitingReenable: ReadonlyArray<ServiceView>;
  /** Hosts whose evacuation FAILED: still waiting for an operator; nothing is rebuilt for them. */
  readonly awaitingOperator: ReadonlyArray<ServiceView>;
}

/**
 * Decides what to rebuild from a categorisation of Nova's compute services made with the incidents
 * Redis still holds (pure). InstanceHA's in-progress markers need nothing: they are resume candidates
 * without an incident (docs/instance-ha-rules.md#service-categorisation). lifeguard's in-progress
 * markers without an incident are the ones a lost memory leaves behind (at any other time they are
 * left to an operator).
 */
export function planRebuild(categorisation: Categorisation): RebuildPlan {
  return {
    restore: categorisation.orphanedLifeguardMarkers.map((service) => ({
      service,
      incidentId: service.marker.incidentId,
    })),
    awaitingReenable: categorisation.reenableCandidates.filter(
      (service) => service.marker.kind === 'complete',
    ),
    awaitingOperator: categorisation.failedEvacuations,
  };
}
