import type { ClaimAnswer } from '@lifeguard/runtime';

/** The gate name a fence held back by another run's power-off claim is deferred and counted under. */
export const POWER_OFF_CLAIM_GATE = 'power-off-claim';

/**
 * What a fence job does with the power-off claim it asked for just before its power-off
 * (docs/safety-rules.md#rule-3-one-incident-per-host):
 * - `power-off`: this run holds the claim and the incident, read after the claim was taken, has no
 *   fence record: power the host off;
 * - `use-record`: the incident read after the claim was taken already carries a fence record (a run
 *   that held the claim before this one fenced the host and recorded it, or an operator confirmed
 *   it): no second power-off, the record is the fence;
 * - `wait`: another run holds the claim (its power-off is under way): check again later, when its
 *   fence record should be there or its claim has run out.
 */
export type PowerOffClaimVerdict =
  | { readonly kind: 'power-off' }
  | { readonly kind: 'use-record' }
  | { readonly kind: 'wait'; readonly reason: string };

/**
 * The power-off claim's verdict (pure). The claim is keyed by incident and held by one run of the
 * host's fence job (its BullMQ lock token); the incident is read after every take.
 * @param fenceRecorded whether the incident, read after the claim was taken, carries a fence record
 */
export function powerOffClaimVerdict(claim: ClaimAnswer, fenceRecorded: boolean): PowerOffClaimVerdict {
  if (claim.kind === 'held') {
    const left = Math.ceil(claim.expiresInMilliseconds / 1000);
    return {
      kind: 'wait',
      reason: `${claim.holder.name || 'another worker'} is powering the host off (its power-off claim runs out in ${left} s)`,
    };
  }
  return fenceRecorded ? { kind: 'use-record' } : { kind: 'power-off' };
}
