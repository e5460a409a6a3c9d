/**
 * Whether Masakari's API accepts a notification (docs/masakari-api.md#10-what-notification-create-does-in-order),
 * in its order: the `hostname` must name a host (else 400), the host must not be on maintenance,
 * whatever the type (else 409), and no earlier notification of the same host, type and payload may
 * have been generated at most the detection interval before it — or at any time after it (else 409,
 * which tells a monitor to stop retrying). Pure: the facts in, the refusal (or null) out.
 */
import {
  DuplicateNotificationError,
  HostNotFoundByNameError,
  HostOnMaintenanceError,
  type MasakariError,
} from './errors.ts';
import type { HostRecord, NotificationType } from './records.ts';

export interface AdmissionFacts {
  hostname: string;
  type: NotificationType;
  /** The live host named `hostname`, or null. */
  host: HostRecord | null;
  /** Whether a duplicate was found (see duplicateWindowStart); null while not looked for yet. */
  duplicate: boolean | null;
}

/** The refusal of a notification, or null when nothing known so far refuses it. */
export function notificationRefusal(facts: AdmissionFacts): MasakariError | null {
  if (facts.host === null) return new HostNotFoundByNameError(facts.hostname);
  if (facts.host.onMaintenance) return new HostOnMaintenanceError(facts.hostname, facts.type);
  if (facts.duplicate === true) return new DuplicateNotificationError(facts.hostname, facts.type);
  return null;
}

/**
 * The earliest generated time, in microseconds, of an earlier notification (same host, type and
 * payload) that makes a new one generated at `generatedMicroseconds` a duplicate; there is no upper
 * bound, as in Masakari.
 */
export function duplicateWindowStart(generatedMicroseconds: number, detectionSeconds: number): number {
  return generatedMicroseconds - detectionSeconds * 1_000_000;
}
