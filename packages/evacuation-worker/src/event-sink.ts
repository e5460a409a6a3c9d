/** The contracts' EventSink: where this worker's events go. */
export type { EventSink } from '@lifeguard/contracts';
