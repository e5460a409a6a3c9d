import type { EvacuateHostJobData, EvacuateHostJobResult } from '@lifeguard/contracts';
import type { Job } from 'bullmq';
import type { Logger } from 'pino';
import type { HostEvacuationState } from './host-state.ts';

/** An `evacuate-host` BullMQ job; its data carries the saved HostEvacuationState under `evacuation`. */
export type HostJob = Job<Record<string, unknown>, EvacuateHostJobResult>;

/** What each step of a host's evacuation works on (see HostEvacuationProcessor). */
export interface HostStepContext {
  readonly job: HostJob;
  /** The job's lock token, for `moveToDelayed` and `moveToWaitingChildren`. */
  readonly token: string;
  /** The job's data, parsed. */
  readonly data: EvacuateHostJobData;
  /** The progress saved so far; a step returns the next one. */
  readonly state: HostEvacuationState;
  /** The worker's logger with `host`, `incidentId` and `jobId` bound. */
  readonly log: Logger;
}
