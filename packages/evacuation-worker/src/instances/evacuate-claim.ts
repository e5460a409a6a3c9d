import type { Migration } from '@lifeguard/openstack';
import type { ClaimAnswer } from '@lifeguard/runtime';

/**
 * What an instance job does with the evacuate claim it asked for, once its read-before-write said
 * "evacuate" and the world's re-check said "go" (docs/safety-rules.md#rule-3-one-incident-per-host):
 * - `evacuate`: send the request — this run holds the claim, and the look it decided on is not older
 *   than anything another holder may have sent;
 * - `look-again`: this run has just taken a claim someone held before: a holder's evacuate may have
 *   reached Nova after the look was read, so Nova is read again (at once) before anything is sent;
 * - `watch`: another run holds the claim and this incident's evacuation migration of the instance is
 *   in Nova: that run's evacuation is followed as Nova shows it, never repeated;
 * - `wait`: another run holds the claim and Nova shows no evacuation of it yet: that run is between
 *   its claim and its request (or died there); look again after a poll, until its migration shows or
 *   its claim runs out and can be taken.
 */
export type EvacuateClaimVerdict =
  | { readonly kind: 'evacuate' }
  | { readonly kind: 'look-again' }
  | { readonly kind: 'watch'; readonly reason: string }
  | { readonly kind: 'wait'; readonly reason: string };

/**
 * The evacuate claim's verdict (pure). The claim is keyed by incident and instance and held by one run
 * of the instance's job (its BullMQ lock token); every evacuate request is sent under it, so:
 * - `mine`: this run held it since before the look it acts on (a new holder always looks again first);
 * - `taken` with generation 1: nobody held it before in this incident, so nobody sent an evacuate;
 * - `taken` with a higher generation: a holder before this run (released, or its lifetime run out)
 *   may have sent one after the look → look again;
 * - `held` by another run: its evacuation in Nova (`latest`, this incident's newest evacuation
 *   migration of the instance, whatever its status) → watch; none → wait.
 * @param latest the migration the look read (null when it read none)
 */
export function evacuateClaimVerdict(claim: ClaimAnswer, latest: Migration | null): EvacuateClaimVerdict {
  if (claim.kind === 'mine') return { kind: 'evacuate' };
  if (claim.kind === 'taken') return claim.generation <= 1 ? { kind: 'evacuate' } : { kind: 'look-again' };
  const holder = `${claim.holder.name || 'another worker'} holds the evacuate claim`;
  const left = Math.ceil(claim.expiresInMilliseconds / 1000);
  if (latest !== null) {
    return {
      kind: 'watch',
      reason: `${holder}; watching its evacuation (migration ${latest.id} ${latest.status ?? 'without a status'})`,
    };
  }
  return {
    kind: 'wait',
    reason: `${holder} and Nova shows no evacuation of it yet; waiting for one (the claim runs out in ${left} s)`,
  };
}
