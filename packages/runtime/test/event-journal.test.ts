import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createEvent, type LifeguardEvent } from '@lifeguard/contracts';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis } from '@lifeguard/testing';
import { EventJournal, redisKey } from '../src/index.ts';

const source = { service: 'evacuation-worker', instance: 'evacuator-1' };
const incidentId = 'compute-7.20261130T000000Z.abcd';

/** `host.reenabled` of host `compute-<number>` at second `second` of a minute. */
const reenabled = (number: number, second: number, incident = incidentId): LifeguardEvent =>
  createEvent(
    'host.reenabled',
    { host: `compute-${number}`, serviceId: `service-${number}`, incidentId: incident },
    source,
    new Date(`2026-11-30T09:50:${String(second).padStart(2, '0')}Z`),
  );

/** The event journal's readers: each stream is read in one place, whatever the caller asks for. */
describe('event journal: what its readers give back', () => {
  const redis = testRedis();
  const prefixes: string[] = [];
  const journalOnFreshPrefix = () => {
    const prefix = randomKeyPrefix('event-journal');
    prefixes.push(prefix);
    return { prefix, journal: new EventJournal(redis, prefix) };
  };

  after(async () => {
    for (const prefix of prefixes) await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  it('recent(count) is the count most recent events, oldest first; an entry that is no event is skipped', async () => {
    const { prefix, journal } = journalOnFreshPrefix();
    const events = [1, 2, 3, 4, 5].map((number) => reenabled(number, number));
    for (const event of events.slice(0, 3)) await journal.record(event);
    await redis.xadd(redisKey(prefix, 'events'), '*', 'event', JSON.stringify({ type: 'not.an.event' }));
    for (const event of events.slice(3)) await journal.record(event);
    assert.deepEqual(await journal.recent(2), events.slice(3));
    assert.deepEqual(await journal.recent(4), events.slice(1));
    assert.deepEqual(await journal.recent(), events);
    assert.deepEqual(await journal.recent(0), []);
  });

  it('recentMatching reads past a page of other events to find the matching ones, oldest first', async () => {
    const { journal } = journalOnFreshPrefix();
    const events = Array.from({ length: 12 }, (_, index) => reenabled(index % 3 === 0 ? 1 : 2, index));
    for (const event of events) await journal.record(event);
    const ofHost1 = events.filter((event) => (event.data as { host: string }).host === 'compute-1');
    const matches = (event: LifeguardEvent) => (event.data as { host: string }).host === 'compute-1';
    assert.deepEqual(await journal.recentMatching(10, matches, 2), ofHost1);
    assert.deepEqual(await journal.recentMatching(2, matches, 2), ofHost1.slice(-2));
  });

  it("incident(id) is the incident's events, oldest first, each id once", async () => {
    const { journal } = journalOnFreshPrefix();
    const first = reenabled(1, 1);
    const other = reenabled(2, 2, 'compute-2.20261130T000000Z.beef');
    await journal.record(first);
    await journal.record(other);
    await journal.record(first);
    assert.deepEqual(await journal.incident(incidentId), [first]);
    assert.deepEqual(await journal.recent(), [first, other, first]);
  });
});
