import { z } from 'zod';

/**
 * A host monitor's word that a compute host stopped (a Masakari hostmonitor's COMPUTE_HOST STOPPED
 * notification, as lifeguard's Masakari engine records it). It is a detection signal only: the node
 * monitor judges it with Nova's fresh listing (judgeMonitorReport) and, when it holds, passes the host
 * through every admission gate as it does a failure Nova reports (docs/migrating-from-masakari.md).
 */
export const MonitorReport = z.object({
  /** The host as the monitor named it (Masakari's notification `hostname`: Nova's service host). */
  host: z.string().min(1),
  /** Who reported: the Masakari API today. */
  source: z.literal('masakari'),
  /** The sender's reference: the Masakari notification's uuid. */
  reference: z.string().min(1),
  /** When lifeguard received the report (its own clock, not the monitor's `generated_time`). */
  reportedAt: z.iso.datetime(),
});
export type MonitorReport = z.infer<typeof MonitorReport>;

/**
 * What the node monitor made of a report, kept for its sender:
 * - `admitted`: the host passed every admission gate; `incidentId` is the incident that fences and
 *   evacuates it (an incident already open for the host counts too);
 * - `refused`: the report did not hold (nova-compute reported after it) or a gate refused the host;
 *   nothing was fenced; `gate` names the gate, or is null for the report rule itself.
 */
export const MonitorReportVerdict = z.discriminatedUnion('verdict', [
  z.object({
    verdict: z.literal('admitted'),
    host: z.string().min(1),
    incidentId: z.string().min(1),
    reason: z.string(),
    at: z.iso.datetime(),
  }),
  z.object({
    verdict: z.literal('refused'),
    host: z.string().min(1),
    gate: z.string().nullable(),
    reason: z.string(),
    at: z.iso.datetime(),
  }),
]);
export type MonitorReportVerdict = z.infer<typeof MonitorReportVerdict>;
