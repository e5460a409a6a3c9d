/** An instance of a fenced host, named as the events about it name it. */
export interface IncidentInstance {
  /** The failed host the instance was on. */
  readonly host: string;
  readonly incidentId: string;
  readonly instanceId: string;
  readonly instanceName: string;
}
