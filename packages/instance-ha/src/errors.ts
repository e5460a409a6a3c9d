/** No incident has this id. */
export class IncidentNotFoundError extends Error {
  constructor(readonly incidentId: string) {
    super(`incident ${incidentId} does not exist`);
    this.name = 'IncidentNotFoundError';
  }
}

/** The host has no open incident (e.g. an operator confirms fencing of a host nobody is handling). */
export class NoOpenIncidentError extends Error {
  constructor(readonly host: string) {
    super(`host ${host} has no open incident`);
    this.name = 'NoOpenIncidentError';
  }
}

/** The incident is closed; it can no longer change. */
export class IncidentClosedError extends Error {
  constructor(
    readonly incidentId: string,
    readonly requestedState: string,
  ) {
    super(`incident ${incidentId} is closed; cannot move it to ${requestedState}`);
    this.name = 'IncidentClosedError';
  }
}

/**
 * An evacuation state was requested for an incident without a fence record: the one unforgivable
 * bug (evacuating a host that was not fenced) is refused here too (docs/safety-rules.md#rule-1-fenced-before-evacuated).
 */
export class IncidentNotFencedError extends Error {
  constructor(
    readonly incidentId: string,
    readonly requestedState: string,
  ) {
    super(`incident ${incidentId} has no fence record; refusing to move it to ${requestedState}`);
    this.name = 'IncidentNotFencedError';
  }
}

/** A record in Redis does not satisfy the incident schema (written by another version, or damaged). */
export class IncidentRecordError extends Error {
  constructor(
    readonly key: string,
    problem: string,
  ) {
    super(`incident record ${key} is invalid: ${problem}`);
    this.name = 'IncidentRecordError';
  }
}
