import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { redisKey } from '@lifeguard/runtime';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis } from '@lifeguard/testing';
import { ReenableWaits, waitToAnnounce } from '../src/index.ts';

const redis = testRedis();
const prefix = randomKeyPrefix('reenable-waits');
after(async () => {
  await deleteKeysWithPrefix(redis, prefix);
  redis.disconnect();
});

describe('ReenableWaits (Redis)', () => {
  const refusal = {
    host: 'compute-7.example.org',
    serviceId: 'svc-7',
    incidentId: null,
    reason: 'done records',
  };

  it('keeps since and announcedAt across refusals of the same wait, and starts afresh for another incident', async () => {
    const waits = new ReenableWaits(redis, prefix);
    const first = await waits.refused(refusal, new Date('2026-12-01T10:00:00Z'));
    assert.equal(waitToAnnounce(first, new Date('2026-12-01T10:04:59Z'), 300), false);
    assert.equal(waitToAnnounce(first, new Date('2026-12-01T10:05:00Z'), 300), true);
    await waits.announced(first, new Date('2026-12-01T10:05:00Z'));
    const again = await waits.refused(refusal, new Date('2026-12-01T10:06:00Z'));
    assert.equal(again.since, '2026-12-01T10:00:00.000Z');
    assert.equal(again.announcedAt, '2026-12-01T10:05:00.000Z');
    assert.equal(again.lastRefusedAt, '2026-12-01T10:06:00.000Z');
    assert.equal(waitToAnnounce(again, new Date('2026-12-01T10:06:00Z'), 300), false, 'said once');
    const other = await waits.refused(
      { ...refusal, incidentId: 'compute-7.20261201T110000Z.beef' },
      new Date('2026-12-01T11:00:00Z'),
    );
    assert.equal(other.since, '2026-12-01T11:00:00.000Z');
    assert.equal(other.announcedAt, null);
    assert.deepEqual(
      (await waits.list()).map((wait) => wait.host),
      ['compute-7.example.org'],
      'one field per short hostname',
    );
    await waits.clear('compute-7');
    assert.deepEqual(await waits.list(), []);
  });

  it('lists a record that does not parse as unreadable, leaves it in Redis, and a refusal replaces it', async () => {
    const waits = new ReenableWaits(redis, prefix);
    const key = redisKey(prefix, 'evacuation', 'reenable-waiting');
    await redis.hset(key, 'compute-8', '{"host": 42');
    assert.deepEqual(await waits.list(true), { waits: [], unreadable: ['compute-8'] });
    assert.equal(await redis.hget(key, 'compute-8'), '{"host": 42');
    assert.equal(await waits.get('compute-8'), null);
    await waits.refused({ ...refusal, host: 'compute-8' });
    assert.equal((await waits.list(true)).unreadable.length, 0);
  });
});
