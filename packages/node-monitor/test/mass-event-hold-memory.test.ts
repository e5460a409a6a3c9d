// The mass-event holds outlive a leader change (regression: a node monitor killed while a whole-cloud
// cut-off healed in waves; the new leader started without holds and fenced the hosts of the last wave,
// seconds before they reported again).
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { type MassEventHold, MassEventHoldStore } from '@lifeguard/instance-ha';
import { createLogger } from '@lifeguard/runtime';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis } from '@lifeguard/testing';
import { MassEventHoldMemory } from '../src/mass-event-hold-memory.ts';

const redis = testRedis();
const logger = createLogger({ service: 'mass-event-holds-test', level: 'silent' });
const config = { massEventHoldDownSeconds: 20, pollSeconds: 1 };
const prefixes: string[] = [];
const store = () => {
  const prefix = randomKeyPrefix('mass-event-holds');
  prefixes.push(prefix);
  return { prefix, store: new MassEventHoldStore(redis, prefix) };
};
const blocked: MassEventHold = {
  gate: 'heartbeat-cliff',
  heldSince: new Date('2026-12-07T06:48:40.000Z'),
  clearedAt: null,
};
const cleared: MassEventHold = { ...blocked, clearedAt: new Date('2026-12-07T06:49:02.500Z') };

after(async () => {
  for (const prefix of prefixes) await deleteKeysWithPrefix(redis, prefix);
  redis.disconnect();
});

describe('the mass-event holds across a leader change', () => {
  it("a new leader's first cycle holds what the last leader held, every field as it was", async () => {
    const { store: holds } = store();
    const last = new MassEventHoldMemory(holds, logger);
    assert.equal((await last.current(1)).size, 0, 'nothing held before the mass event');
    await last.keep(
      new Map([
        ['compute-06', blocked],
        ['compute-07', cleared],
      ]),
      config,
    );
    const next = new MassEventHoldMemory(holds, logger);
    assert.deepEqual(
      await next.current(2),
      new Map([
        ['compute-06', blocked],
        ['compute-07', cleared],
      ]),
    );
  });

  it('the leader reads the store once per leadership: its own holds go on from cycle to cycle', async () => {
    const { store: holds } = store();
    const leader = new MassEventHoldMemory(holds, logger);
    await leader.current(3);
    await leader.keep(new Map([['compute-06', blocked]]), config);
    await holds.write(new Map([['compute-08', blocked]]), 60); // what a deposed leader wrote late
    assert.deepEqual([...(await leader.current(3)).keys()], ['compute-06'], 'the same leadership');
    assert.deepEqual([...(await leader.current(4)).keys()], ['compute-08'], 'a new leadership reads again');
  });

  it('no holds left: the record is deleted, and the next leader starts with none', async () => {
    const { prefix, store: holds } = store();
    const leader = new MassEventHoldMemory(holds, logger);
    await leader.keep(new Map([['compute-06', blocked]]), config);
    const ttl = await redis.ttl(`${prefix}:instance-ha:admission:mass-event-holds`);
    assert.ok(ttl > 40 && ttl <= 50, `kept twice the hold-down and ten polls (${ttl} s)`);
    await leader.keep(new Map(), config);
    assert.equal(await redis.exists(`${prefix}:instance-ha:admission:mass-event-holds`), 0);
    assert.equal((await new MassEventHoldMemory(holds, logger).current(5)).size, 0);
  });

  it('a record that is not holds is named and read again next cycle; meanwhile the own holds are used', async () => {
    const { prefix, store: holds } = store();
    const key = `${prefix}:instance-ha:admission:mass-event-holds`;
    await redis.set(key, JSON.stringify({ 'compute-06': { gate: 'no-such-gate' } }));
    await assert.rejects(holds.read(), new RegExp(`${key} does not hold mass-event holds`));
    const leader = new MassEventHoldMemory(holds, logger);
    assert.equal((await leader.current(6)).size, 0);
    await holds.write(new Map([['compute-06', blocked]]), 60);
    assert.deepEqual([...(await leader.current(6)).keys()], ['compute-06'], 'read again, now readable');
  });
});
