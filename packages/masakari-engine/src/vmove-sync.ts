import type { MasakariStore } from '@lifeguard/masakari-api';
import type { EventJournal } from '@lifeguard/runtime';
import { incidentVmoves } from './rules/incident-vmoves.ts';

export interface VmoveSyncOptions {
  /** The incidents' timelines, where the evacuation worker's per-instance outcomes are journalled. */
  readonly journal: Pick<EventJournal, 'incident'>;
  readonly store: Pick<MasakariStore, 'recordVmoves'>;
}

/**
 * What keeps a COMPUTE_HOST notification's vmoves (Masakari's microversion 1.3) in step with its
 * incident: each call reads the incident's events, derives the vmoves (incidentVmoves) and writes
 * them to the Masakari store when they changed since the last call. Writing the same vmoves again,
 * from a redelivered job or another engine, changes nothing (their uuids are derived from the
 * notification and the instance).
 */
export function vmoveSync(
  options: VmoveSyncOptions,
  notificationUuid: string,
  incidentId: string,
): () => Promise<void> {
  let written = '[]';
  return async () => {
    const moves = incidentVmoves(incidentId, await options.journal.incident(incidentId));
    const text = JSON.stringify(moves);
    if (text === written) return;
    await options.store.recordVmoves(notificationUuid, moves);
    written = text;
  };
}
