import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { offeredEventId } from '../src/store/block-store.ts';

const marker = (key: string) => ({ key, ttlSeconds: 600, value: '1' });

describe('the event id a completion offers', () => {
  it('is the same for the same request and object, so a request handled again after a lost write re-offers it', () => {
    const first = offeredEventId(marker('p:handled:abc'), 'provisioning.complete', 'port:p1');
    const again = offeredEventId(marker('p:handled:abc'), 'provisioning.complete', 'port:p1');
    assert.equal(first, again);
    assert.match(first, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('differs between requests, objects and event types', () => {
    const ids = new Set([
      offeredEventId(marker('p:handled:abc'), 'provisioning.complete', 'port:p1'),
      offeredEventId(marker('p:handled:def'), 'provisioning.complete', 'port:p1'),
      offeredEventId(marker('p:handled:abc'), 'provisioning.complete', 'port:p2'),
      offeredEventId(marker('p:handled:abc'), 'port.vif.plugged', 'port:p1'),
    ]);
    assert.equal(ids.size, 4);
  });

  it('is a fresh random id for a request without a handled marker', () => {
    assert.notEqual(
      offeredEventId(null, 'provisioning.complete', 'port:p1'),
      offeredEventId(null, 'provisioning.complete', 'port:p1'),
    );
  });
});
