import type { LifeguardEvent } from '@lifeguard/contracts';

/**
 * The fence of an incident held back because its host's servers would have nowhere to go: the last
 * `host.capacity.insufficient` of the incident, while the incident is still `open` (once room appears
 * the fencing worker moves it on to `fencing`).
 */
export interface CapacityHold {
  /** When the fencing worker found no room (the event's time). */
  readonly at: string;
  readonly serverCount: number;
  /** What is missing, in the event's words. */
  readonly reason: string;
}

/** The capacity hold of an incident in `state` from its events (oldest first), or null. Pure. */
export function capacityHoldOf(state: string, events: ReadonlyArray<LifeguardEvent>): CapacityHold | null {
  if (state !== 'open') return null;
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!;
    if (event.type === 'host.capacity.insufficient')
      return { at: event.occurredAt, serverCount: event.data.serverCount, reason: event.data.reason };
  }
  return null;
}
