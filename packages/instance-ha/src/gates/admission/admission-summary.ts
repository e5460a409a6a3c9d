import { AdmissionGate } from '@lifeguard/contracts';
import { z } from 'zod';
import type { AdmissionDecision } from './admission-decision.ts';
import { MASS_EVENT_GATES } from './mass-event-hold-down-gate.ts';

/**
 * What the leader's last poll cycle held back, as the operator tools show it (`lifeguard status`,
 * the console): each gate that blocked hosts with its reason, THRESHOLD's counts, and the hosts held
 * down after a mass event with the moment each is released if it stays silent. Written by the node
 * monitor every cycle; it expires when no cycle has written it for a while, so a stopped monitor's
 * last word is not shown as the present.
 */
export const AdmissionSummary = z.object({
  /** When the cycle ran. */
  at: z.iso.datetime(),
  /** The gate that stopped the whole cycle, if any. */
  stoppedBy: z.enum(['all-services-stale', 'threshold', 'disabled', 'scheduler-down']).nullable(),
  blocked: z.array(
    z.object({
      gate: z.union([AdmissionGate, z.literal('threshold'), z.literal('aggregate-threshold')]),
      hosts: z.array(z.string()),
      reason: z.string(),
    }),
  ),
  held: z.array(z.object({ host: z.string(), gate: z.enum(MASS_EVENT_GATES), until: z.iso.datetime() })),
});
export type AdmissionSummary = z.infer<typeof AdmissionSummary>;

/** The summary of a cycle's decision (pure: the node monitor writes it, the operator tools read it). */
export function admissionSummaryOf(decision: AdmissionDecision, now: Date): AdmissionSummary {
  const exceeded = decision.thresholdExceeded.map((each) => ({
    gate: each.scope === 'global' ? ('threshold' as const) : ('aggregate-threshold' as const),
    hosts: [...each.hosts],
    reason:
      each.scope === 'global'
        ? `${each.impacted} of ${each.total} compute hosts impacted (${each.percent.toFixed(1)} %, THRESHOLD ${each.threshold} %)`
        : `aggregate ${each.aggregate}: ${each.impacted} impacted > instanceha:max_failures ${each.threshold}`,
  }));
  return {
    at: now.toISOString(),
    stoppedBy: decision.stoppedBy,
    blocked: [
      ...exceeded,
      ...decision.blocked.map((block) => ({
        gate: block.gate,
        hosts: [...block.hosts],
        reason: block.reason,
      })),
    ],
    held: (decision.massEventHoldDown?.held ?? []).map((each) => ({
      host: each.host,
      gate: each.gate,
      until: each.until.toISOString(),
    })),
  };
}

/**
 * The leader's last poll that failed (Nova unreachable or erring, the cycle past its deadline): when,
 * how many in a row, and why. Nothing is fenced while polls fail, and the operator tools say so
 * instead of showing the last good poll's summary as the present.
 */
export const FailedPoll = z.object({
  at: z.iso.datetime(),
  consecutiveFailures: z.number().int().positive(),
  reason: z.string(),
});
export type FailedPoll = z.infer<typeof FailedPoll>;
