/**
 * One instance could not be evacuated: Nova refused, the evacuation migration failed
 * EVACUATION_RETRIES times, it did not finish within EVACUATION_TIMEOUT, or it ended in the wrong
 * state. `attempts` counts evacuate requests; `novaRequestId` is the last evacuate's request id.
 */
export class InstanceEvacuationFailedError extends Error {
  constructor(
    readonly instanceId: string,
    readonly reason: string,
    readonly attempts: number,
    readonly novaRequestId: string | null,
  ) {
    super(`instance ${instanceId} was not evacuated: ${reason}`);
    this.name = 'InstanceEvacuationFailedError';
  }
}

/** The worker is shutting down: the instance's job goes back to the queue and resumes elsewhere. */
export class EvacuationInterruptedError extends Error {
  constructor(readonly instanceId: string) {
    super(`evacuation of instance ${instanceId} interrupted by shutdown; it resumes in another worker`);
    this.name = 'EvacuationInterruptedError';
  }
}

/**
 * An instance job that Redis no longer holds (its memory was lost, docs/failure-modes.md#redis-restarted-empty):
 * the process still running it stops without an evacuate request, an event or a stop flag; the
 * rebuilt incident's own jobs take the instance over.
 */
export class EvacuationJobLostError extends Error {
  constructor(readonly jobId: string) {
    super(`job ${jobId} is no longer in Redis (its memory was lost): stopping without effect`);
    this.name = 'EvacuationJobLostError';
  }
}
