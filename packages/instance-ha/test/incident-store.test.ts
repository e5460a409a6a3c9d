import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ContractViolationError, IncidentId } from '@lifeguard/contracts';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis } from '@lifeguard/testing';
import {
  IncidentClosedError,
  IncidentNotFencedError,
  IncidentNotFoundError,
  IncidentRecordError,
  IncidentStore,
  NoOpenIncidentError,
  newIncidentId,
} from '../src/index.ts';

const evidence = (serviceId: string) => ({
  serviceId,
  state: 'down',
  status: 'enabled',
  forcedDown: false,
  updatedAt: '2026-07-28T09:58:00.000Z',
  ageSeconds: 120,
  disabledReason: null,
  zone: 'nova',
});
const input = (host: string, now = new Date('2026-07-28T10:00:00Z')) => ({
  host,
  serviceId: `svc-${host}`,
  fencingToken: 7,
  kdumpFenced: false,
  evidence: evidence(`svc-${host}`),
  now,
});
const fence = {
  proof: 'power-off-confirmed' as const,
  method: 'fence_ipmilan',
  at: '2026-07-28T10:01:00.000Z',
  by: null,
  note: null,
};

describe('IncidentStore on the real Redis', () => {
  const redis = testRedis();
  const prefix = randomKeyPrefix('incidents');
  const store = new IncidentStore(redis, prefix);
  after(async () => {
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  it('opens an incident with a stable id in the contracts format, state open', async () => {
    const { incident, created } = await store.openIncident(input('compute-0.example.com'));
    assert.equal(created, true);
    assert.match(incident.id, /^compute-0\.20260728T100000Z\.[0-9a-f]{4}$/);
    assert.equal(IncidentId.safeParse(incident.id).success, true);
    assert.equal(incident.state, 'open');
    assert.equal(incident.host, 'compute-0.example.com');
    assert.equal(incident.fencingToken, 7);
    assert.equal(incident.fence, null);
    assert.deepEqual(await store.get(incident.id), incident);
  });

  it('returns the open incident for the same host (by short hostname) instead of opening a second', async () => {
    const first = await store.openIncident(input('compute-1'));
    const again = await store.openIncident(input('compute-1.example.com', new Date('2026-07-28T10:05:00Z')));
    assert.equal(again.created, false);
    assert.equal(again.incident.id, first.incident.id);
    assert.equal((await store.getOpenIncident('compute-1.other.net'))?.id, first.incident.id);
  });

  it('opens exactly one incident when many monitors race for the same host', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, () => store.openIncident(input('compute-race'))),
    );
    assert.equal(results.filter((result) => result.created).length, 1);
    assert.equal(new Set(results.map((result) => result.incident.id)).size, 1);
  });

  it('rejects evidence that breaks the contract', async () => {
    await assert.rejects(
      store.openIncident({
        ...input('compute-bad'),
        evidence: { ...evidence('x'), ageSeconds: 'old' } as never,
      }),
      ContractViolationError,
    );
  });

  it('refuses evacuation states before a fence is recorded (safety rule 1)', async () => {
    const { incident } = await store.openIncident(input('compute-2'));
    await store.setState(incident.id, 'fencing');
    for (const state of ['fenced', 'evacuating', 'evacuated'] as const) {
      await assert.rejects(store.setState(incident.id, state), IncidentNotFencedError);
    }
    assert.equal((await store.get(incident.id))?.state, 'fencing');
  });

  it('records the fence once (the first proof wins) and moves the incident to fenced', async () => {
    const { incident } = await store.openIncident(input('compute-3'));
    const fenced = await store.recordFence(incident.id, fence);
    assert.equal(fenced.state, 'fenced');
    assert.deepEqual(fenced.fence, { ...fence, reportingOverride: null });
    const second = await store.recordFence(incident.id, { ...fence, proof: 'kdump', method: 'kdump' });
    assert.deepEqual(second.fence, { ...fence, reportingOverride: null });
    const [a, b] = await Promise.all([
      store.recordFence((await store.openIncident(input('compute-3b'))).incident.id, fence),
      store.recordFence((await store.openIncident(input('compute-3b'))).incident.id, {
        ...fence,
        method: 'redfish',
      }),
    ]);
    assert.deepEqual(a.fence, b.fence);
  });

  it('moves forward through the states and ignores a redelivered earlier state', async () => {
    const { incident } = await store.openIncident(input('compute-4'));
    await store.recordFence(incident.id, fence);
    assert.equal((await store.setState(incident.id, 'evacuating')).state, 'evacuating');
    assert.equal((await store.setState(incident.id, 'fencing')).state, 'evacuating', 'no move back');
    assert.equal((await store.setState(incident.id, 'evacuated')).state, 'evacuated');
    assert.equal((await store.setState(incident.id, 'failed')).state, 'failed');
    assert.equal(
      (await store.setState(incident.id, 'evacuating')).state,
      'evacuating',
      'a failed incident can be retried',
    );
  });

  it('closes an incident: final, kept, and the host may get a new incident', async () => {
    const { incident } = await store.openIncident(input('compute-5'));
    const closed = await store.close(incident.id, 'reenabled');
    assert.equal(closed.state, 'closed');
    assert.equal(closed.outcome, 'reenabled');
    assert.ok(closed.closedAt);
    assert.equal((await store.close(incident.id, 'again')).outcome, 'reenabled', 'the first outcome stays');
    await assert.rejects(store.setState(incident.id, 'open'), IncidentClosedError);
    await assert.rejects(store.recordFence(incident.id, fence), IncidentClosedError);
    assert.equal(await store.getOpenIncident('compute-5'), null);
    assert.ok((await redis.ttl(`${prefix}:instance-ha:incident:${incident.id}`)) > 0);
    const next = await store.openIncident(input('compute-5', new Date('2026-07-28T11:00:00Z')));
    assert.equal(next.created, true);
    assert.notEqual(next.incident.id, incident.id);
  });

  it('records an operator-confirmed fence on the host’s open incident, and throws when none is open', async () => {
    const { incident } = await store.openIncident(input('compute-6'));
    const confirmed = await store.confirmFencedByOperator('compute-6.example.com', 'alice', 'BMC lost power');
    assert.equal(confirmed.id, incident.id);
    assert.equal(confirmed.fence?.proof, 'operator-confirmed');
    assert.equal(confirmed.fence?.by, 'alice');
    assert.equal(confirmed.fence?.note, 'BMC lost power');
    assert.equal(confirmed.state, 'fenced');
    await assert.rejects(store.confirmFencedByOperator('compute-none', 'alice', null), NoOpenIncidentError);
  });

  it('throws IncidentNotFoundError for an unknown incident', async () => {
    await assert.rejects(store.setState('nope.20260728T100000Z.0000', 'fencing'), IncidentNotFoundError);
    assert.equal(await store.get('nope.20260728T100000Z.0000'), null);
  });

  it('lists open incidents (oldest first) and recent ones (newest first, closed included)', async () => {
    const own = new IncidentStore(redis, `${prefix}-lists`);
    const a = await own.openIncident(input('list-a', new Date('2026-07-28T10:00:00Z')));
    const b = await own.openIncident(input('list-b', new Date('2026-07-28T10:01:00Z')));
    const c = await own.openIncident(input('list-c', new Date('2026-07-28T10:02:00Z')));
    await own.close(b.incident.id, 'false alarm');
    assert.deepEqual(
      (await own.listOpen()).map((incident) => incident.host),
      ['list-a', 'list-c'],
    );
    assert.deepEqual(
      (await own.listRecent(2)).map((incident) => incident.host),
      ['list-c', 'list-b'],
    );
    assert.deepEqual([...(await own.openByShortHost()).keys()], ['list-a', 'list-c']);
    assert.equal((await own.listRecent(10)).length, 3);
    assert.equal(a.created && c.created, true);
    await deleteKeysWithPrefix(redis, `${prefix}-lists`);
  });

  it('records each publication of host.down (time and count)', async () => {
    const { incident } = await store.openIncident(input('compute-7'));
    await store.recordPublished(incident.id, new Date('2026-07-28T10:00:01Z'));
    const after = await store.recordPublished(incident.id, new Date('2026-07-28T10:00:46Z'));
    assert.equal(after.publishCount, 2);
    assert.equal(after.lastPublishedAt, '2026-07-28T10:00:46.000Z');
  });

  it('never loses a concurrent update (compare-and-set): publications counted exactly', async () => {
    const { incident } = await store.openIncident(input('compute-8'));
    await Promise.all(Array.from({ length: 25 }, () => store.recordPublished(incident.id)));
    assert.equal((await store.get(incident.id))?.publishCount, 25);
  });

  it('reports a damaged record with its key', async () => {
    await redis.set(`${prefix}:instance-ha:incident:broken.20260728T100000Z.0000`, '{"id": 1}');
    await assert.rejects(store.get('broken.20260728T100000Z.0000'), IncidentRecordError);
  });

  it('makes incident ids safe for any host name', () => {
    for (const host of ['-weird host!', 'compute_9', 'a'.repeat(300), '']) {
      assert.equal(IncidentId.safeParse(newIncidentId(host)).success, true, host);
    }
  });
});
