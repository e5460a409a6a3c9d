// The placement directives the Masakari engine writes for the evacuation worker, and the outcomes the
// evacuation writes back, on real Redis (docs/migrating-from-masakari.md#recovery-methods).
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis } from '@lifeguard/testing';
import { type PlacementDirective, PlacementDirectiveStore, type PlacementOutcome } from '../src/index.ts';

const redis = testRedis();
const prefix = randomKeyPrefix('placement');
const store = new PlacementDirectiveStore(redis, prefix);

const directive = (host: string, reference: string): PlacementDirective => ({
  host,
  method: 'reserved_host',
  reservedHosts: ['spare-2', 'spare-1'],
  segment: { name: 'segment-a', uuid: '6d1b1f7c-3f55-4a8e-9a52-8b9f3d2d0a11' },
  reference,
  incidentId: null,
  writtenAt: '2026-12-07T05:00:00.000Z',
});

describe('PlacementDirectiveStore', () => {
  after(async () => {
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  it('an unbound directive governs any incident of its host; once bound, only that incident', async () => {
    await store.write(directive('compute-1.example.org', 'n-1'));
    assert.equal((await store.forIncident('compute-1', 'compute-1.20261207T050000Z.a1b2'))?.reference, 'n-1');
    assert.equal(await store.bind('compute-1', 'n-1', 'compute-1.20261207T050000Z.a1b2'), true);
    assert.equal(
      (await store.forIncident('compute-1', 'compute-1.20261207T050000Z.a1b2'))?.incidentId,
      'compute-1.20261207T050000Z.a1b2',
    );
    assert.equal(
      await store.forIncident('compute-1', 'compute-1.20261208T050000Z.c3d4'),
      null,
      'a later incident',
    );
    assert.deepEqual(
      (await store.get('compute-1'))?.reservedHosts,
      ['spare-2', 'spare-1'],
      'the order is kept',
    );
    const ttl = await redis.ttl(`${prefix}:instance-ha:placement-directive:compute-1`);
    assert.ok(ttl > 0, 'kept for a while, not for ever');
  });

  it('binding or removing for another notification leaves a newer directive alone', async () => {
    await store.write(directive('compute-2', 'n-old'));
    await store.write(directive('compute-2', 'n-new'));
    assert.equal(await store.bind('compute-2', 'n-old', 'compute-2.20261207T050000Z.a1b2'), false);
    assert.equal(await store.remove('compute-2', 'n-old'), false);
    assert.equal((await store.get('compute-2'))?.reference, 'n-new');
    assert.equal(await store.remove('compute-2', 'n-new'), true);
    assert.equal(await store.get('compute-2'), null);
  });

  it('a record that is not a directive is no directive', async () => {
    await redis.set(`${prefix}:instance-ha:placement-directive:compute-3`, '{"method":"sometimes"}');
    assert.equal(await store.forIncident('compute-3', 'compute-3.20261207T050000Z.a1b2'), null);
    assert.equal(await store.bind('compute-3', 'n-1', 'compute-3.20261207T050000Z.a1b2'), false);
  });

  it('records an outcome and changes it in place', async () => {
    const incidentId = 'compute-4.20261207T050000Z.a1b2';
    const outcome: PlacementOutcome = {
      incidentId,
      host: 'compute-4',
      method: 'auto_priority',
      reservedHost: 'spare-1',
      inService: false,
      enabled: false,
      refused: false,
      reason: 'held',
      at: '2026-12-07T05:00:00.000Z',
    };
    assert.equal(await store.updateOutcome(incidentId, { inService: true }), false, 'nothing to change yet');
    await store.recordOutcome(outcome);
    assert.equal(await store.updateOutcome(incidentId, { inService: true, enabled: true }), true);
    assert.deepEqual(await store.outcome(incidentId), { ...outcome, inService: true, enabled: true });
    // Concurrent changes each land (compare-and-set retried).
    await Promise.all(
      ['a', 'b', 'c', 'd'].map((each) => store.updateOutcome(incidentId, { reason: `reason ${each}` })),
    );
    assert.match((await store.outcome(incidentId))?.reason ?? '', /^reason [abcd]$/);
  });
});
