// The evacuate claim's rule (evacuateClaimVerdict), as a table: what a run that is about to send an
// evacuate does with the claim's answer and the migration its look read. Pure: no Nova, no Redis.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Migration } from '@lifeguard/openstack';
import type { ClaimAnswer } from '@lifeguard/runtime';
import { evacuateClaimVerdict } from '../src/index.ts';

const migration = (status: string) =>
  Migration.parse({
    id: 41,
    instance_uuid: 'vm',
    source_compute: 'compute-1',
    status,
    migration_type: 'evacuation',
    created_at: '2026-12-07T05:00:00.000000',
  });

const held = (expiresInMilliseconds: number, name = 'worker-a'): ClaimAnswer => ({
  kind: 'held',
  generation: 1,
  holder: { token: 'bull-worker-id:7', name },
  expiresInMilliseconds,
});

const TABLE: ReadonlyArray<{
  readonly case: string;
  readonly claim: ClaimAnswer;
  readonly latest: ReturnType<typeof migration> | null;
  readonly verdict: ReturnType<typeof evacuateClaimVerdict>;
}> = [
  {
    case: 'this run held it since before its look',
    claim: { kind: 'mine', generation: 2 },
    latest: null,
    verdict: { kind: 'evacuate' },
  },
  {
    case: 'this run holds it and retries after its failed attempt',
    claim: { kind: 'mine', generation: 1 },
    latest: migration('error'),
    verdict: { kind: 'evacuate' },
  },
  {
    case: 'taken now, nobody ever held it: nobody sent an evacuate',
    claim: { kind: 'taken', generation: 1, previous: null },
    latest: null,
    verdict: { kind: 'evacuate' },
  },
  {
    case: 'taken now from a holder that released it: its evacuate may be newer than the look',
    claim: { kind: 'taken', generation: 2, previous: null },
    latest: null,
    verdict: { kind: 'look-again' },
  },
  {
    case: 'taken now from a holder whose lifetime ran out',
    claim: { kind: 'taken', generation: 4, previous: { token: 'old:1', name: 'worker-b' } },
    latest: migration('failed'),
    verdict: { kind: 'look-again' },
  },
  {
    case: 'held by another run, Nova shows no evacuation yet',
    claim: held(179_001),
    latest: null,
    verdict: {
      kind: 'wait',
      reason:
        'worker-a holds the evacuate claim and Nova shows no evacuation of it yet; waiting for one (the claim runs out in 180 s)',
    },
  },
  {
    case: 'held by another run whose evacuation Nova shows (its attempt failed: it retries, not this run)',
    claim: held(5000),
    latest: migration('error'),
    verdict: {
      kind: 'watch',
      reason: 'worker-a holds the evacuate claim; watching its evacuation (migration 41 error)',
    },
  },
  {
    case: 'held by a run of unknown name',
    claim: held(1, ''),
    latest: migration('accepted'),
    verdict: {
      kind: 'watch',
      reason: 'another worker holds the evacuate claim; watching its evacuation (migration 41 accepted)',
    },
  },
];

describe('evacuateClaimVerdict: only the claim holder sends an evacuate', () => {
  for (const row of TABLE) {
    it(row.case, () => {
      assert.deepEqual(evacuateClaimVerdict(row.claim, row.latest), row.verdict);
    });
  }
});
