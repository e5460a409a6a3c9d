import { FenceProof, HostDownEvidence, HostName, IncidentId, Timestamp } from '@lifeguard/contracts';
import { z } from 'zod';

/**
 * The life of one host failure:
 * `open` (host.down published) → `fencing` → `fenced` (a fence proof is recorded) → `evacuating` →
 * `evacuated` (waiting for re-enable) → `closed`; `failed` when a person must act (it can be retried).
 */
export const IncidentState = z.enum([
  'open',
  'fencing',
  'fenced',
  'evacuating',
  'evacuated',
  'failed',
  'closed',
]);
export type IncidentState = z.infer<typeof IncidentState>;

/** How and when the host was fenced in this incident. */
export const FenceRecord = z.object({
  proof: FenceProof,
  /** The method that succeeded: `fence_ipmilan`, `redfish`, `kdump`, `operator`, ... */
  method: z.string().min(1),
  /** ISO 8601. */
  at: Timestamp,
  /** The operator, for `operator-confirmed`; else null. */
  by: z.string().nullable(),
  note: z.string().nullable(),
  /**
   * Set when an operator confirmed the host fenced although it was reporting (the CLI's
   * `--host-is-reporting-override`): the evidence they overrode, e.g. `state up, updated_at 2 s ago`.
   * The evacuation then accepts the fence despite the reports; null otherwise.
   */
  reportingOverride: z.string().nullable().default(null),
});
export type FenceRecord = z.infer<typeof FenceRecord>;

/** One failure of one host, kept in Redis for every monitor and worker replica. */
export const Incident = z.object({
  id: IncidentId,
  /** Nova's service host (as first seen). Incidents are unique per short hostname. */
  host: HostName,
  serviceId: z.string().min(1),
  state: IncidentState,
  /** ISO 8601 times. */
  openedAt: Timestamp,
  updatedAt: Timestamp,
  /** The leader-lease token of the monitor that opened the incident. */
  fencingToken: z.number().int().nonnegative(),
  /** The host was sending fence_kdump packets when the incident opened. */
  kdumpFenced: z.boolean(),
  /** The incident was opened for a host already fenced and marked (a resume, e.g. from InstanceHA). */
  resume: z.boolean(),
  evidence: HostDownEvidence,
  fence: FenceRecord.nullable(),
  closedAt: Timestamp.nullable(),
  outcome: z.string().nullable(),
  /** When `host.down` was last published for this incident (by any monitor), or null. */
  lastPublishedAt: Timestamp.nullable().default(null),
  /** How many times `host.down` was published for this incident. */
  publishCount: z.number().int().nonnegative().default(0),
  /**
   * The highest leader-lease token `host.down` was published with for this incident, or null (never
   * published, or recorded before this field existed): a newer leader publishes again an incident
   * only an older leader announced, since consumers drop that leader's events.
   */
  lastPublishedFencingToken: z.number().int().nonnegative().nullable().default(null),
});
export type Incident = z.output<typeof Incident>;

/** States at or after which the fence must be recorded. */
export const FENCED_STATES: ReadonlySet<IncidentState> = new Set(['fenced', 'evacuating', 'evacuated']);

/** Progress order; a state never moves back to an earlier one (except out of `failed`). */
export const STATE_ORDER: Readonly<Record<IncidentState, number>> = {
  open: 0,
  fencing: 1,
  fenced: 2,
  evacuating: 3,
  evacuated: 4,
  failed: 5,
  closed: 6,
};
