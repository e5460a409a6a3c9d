import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { LifeguardEvent } from '@lifeguard/contracts';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis } from '@lifeguard/testing';
import type { Redis } from 'ioredis';
import { BlockStore, PortStore, ProvisioningKeys, UnregisteredObjectTypeError } from '../src/index.ts';
import { outboxEvents, SOURCE, storePort } from './support.ts';

describe('block store: Neutron provisioning_blocks semantics (docs/neutron-provisioning-rules.md#neutrons-tests 1-10)', () => {
  let redis: Redis;
  let prefix: string;
  const prefixes: string[] = [];
  let keys: ProvisioningKeys;
  let blocks: BlockStore;
  let ports: PortStore;

  before(() => {
    redis = testRedis();
  });
  beforeEach(async () => {
    prefix = randomKeyPrefix('blocks');
    prefixes.push(prefix);
    keys = new ProvisioningKeys(prefix);
    blocks = new BlockStore(redis, keys, SOURCE);
    ports = new PortStore(redis, keys, SOURCE);
    await storePort(ports, { id: 'port-a' });
    await storePort(ports, { id: 'port-b' });
  });
  after(async () => {
    for (const each of prefixes) await deleteKeysWithPrefix(redis, each);
    await redis.quit();
  });

  const completions = async () =>
    (await outboxEvents(redis, keys)).filter((entry) => entry.type === 'provisioning.complete');

  it('completing an object that does not exist publishes no event (item 1)', async () => {
    const result = await blocks.provisioningComplete('no-such-port', 'port', 'L2');
    assert.equal(result.outcome, 'missing');
    assert.equal((await completions()).length, 0);
  });

  it('completing a port that has no blocks at all publishes the event (item 2)', async () => {
    const result = await blocks.provisioningComplete('port-a', 'port', 'DHCP');
    assert.equal(result.outcome, 'emitted');
    assert.equal(result.removed, false);
    const [entry] = await completions();
    assert.deepEqual(entry?.parsed.data, { objectType: 'port', objectId: 'port-a', entity: 'DHCP' });
  });

  it('adding one block for an entity and completing that entity publishes the event (item 3)', async () => {
    assert.equal(await blocks.addProvisioningComponent('port-a', 'port', 'L2'), 'added');
    assert.equal((await blocks.provisioningComplete('port-a', 'port', 'L2')).outcome, 'emitted');
    assert.equal((await completions()).length, 1);
  });

  it('with blocks for E1 and E2, completing E1 publishes nothing and completing E2 then publishes (item 4)', async () => {
    await blocks.addProvisioningComponent('port-a', 'port', 'DHCP');
    await blocks.addProvisioningComponent('port-a', 'port', 'L2');
    assert.equal((await blocks.provisioningComplete('port-a', 'port', 'DHCP')).outcome, 'blocked');
    assert.equal((await completions()).length, 0);
    assert.equal((await blocks.provisioningComplete('port-a', 'port', 'L2')).outcome, 'emitted');
    const events = await completions();
    assert.equal(events.length, 1);
    assert.equal(events[0]?.parsed.type === 'provisioning.complete' && events[0].parsed.data.entity, 'L2');
  });

  it('with blocks on port A only, completing port B publishes exactly one event, for B, carrying the request id (item 5)', async () => {
    await blocks.addProvisioningComponent('port-a', 'port', 'L2');
    const result = await blocks.provisioningComplete('port-b', 'port', 'L2', { requestId: 'req-42' });
    assert.equal(result.outcome, 'emitted');
    const events = await completions();
    assert.equal(events.length, 1);
    const event = LifeguardEvent.parse(events[0]!.parsed);
    assert.deepEqual(event.data, {
      objectType: 'port',
      objectId: 'port-b',
      entity: 'L2',
      requestId: 'req-42',
    });
    assert.equal(event.id, result.event?.id);
    assert.equal(events[0]!.routingKey, 'provisioning.complete.port');
    assert.equal(await blocks.isObjectBlocked('port-a', 'port'), true);
  });

  it('a block for E1 and a completion reported by E2 publishes no event (item 6)', async () => {
    await blocks.addProvisioningComponent('port-a', 'port', 'DHCP');
    const result = await blocks.provisioningComplete('port-a', 'port', 'L2');
    assert.deepEqual([result.outcome, result.removed], ['blocked', false]);
    assert.equal((await completions()).length, 0);
  });

  it('is-blocked is true after adding a block, false for an unknown id, false after the only block completed (item 7)', async () => {
    await blocks.addProvisioningComponent('port-a', 'port', 'L2');
    assert.equal(await blocks.isObjectBlocked('port-a', 'port'), true);
    assert.equal(await blocks.isObjectBlocked('unknown', 'port'), false);
    await blocks.provisioningComplete('port-a', 'port', 'L2');
    assert.equal(await blocks.isObjectBlocked('port-a', 'port'), false);
  });

  it('removing E1 returns true and publishes nothing; completing an unrelated entity publishes nothing; completing E2 publishes (item 8)', async () => {
    await blocks.addProvisioningComponent('port-a', 'port', 'DHCP');
    await blocks.addProvisioningComponent('port-a', 'port', 'L2');
    assert.equal(await blocks.removeProvisioningComponent('port-a', 'port', 'DHCP'), true);
    assert.equal(await blocks.removeProvisioningComponent('port-a', 'port', 'DHCP'), false);
    assert.equal((await completions()).length, 0);
    assert.equal((await blocks.provisioningComplete('port-a', 'port', 'SOMETHING')).outcome, 'blocked');
    assert.equal((await completions()).length, 0);
    assert.equal((await blocks.provisioningComplete('port-a', 'port', 'L2')).outcome, 'emitted');
    assert.equal((await completions()).length, 1);
  });

  it('removing the last block never publishes, and removing on a missing object returns false', async () => {
    await blocks.addProvisioningComponent('port-a', 'port', 'DHCP');
    assert.equal(await blocks.removeProvisioningComponent('port-a', 'port', 'DHCP'), true);
    assert.equal(await blocks.isObjectBlocked('port-a', 'port'), false);
    assert.equal((await completions()).length, 0);
    assert.equal(await blocks.removeProvisioningComponent('no-such-port', 'port', 'DHCP'), false);
  });

  it('adding the same block five times then completing once publishes: adding is idempotent (item 9)', async () => {
    const outcomes = [];
    for (let index = 0; index < 5; index++) {
      outcomes.push(await blocks.addProvisioningComponent('port-a', 'port', 'DHCP'));
    }
    assert.deepEqual(outcomes, ['added', 'duplicate', 'duplicate', 'duplicate', 'duplicate']);
    assert.deepEqual(await blocks.blockingEntities('port-a', 'port'), ['DHCP']);
    assert.equal((await blocks.provisioningComplete('port-a', 'port', 'DHCP')).outcome, 'emitted');
  });

  it('adding a block to an object that does not exist stores nothing', async () => {
    assert.equal(await blocks.addProvisioningComponent('no-such-port', 'port', 'DHCP'), 'missing');
    assert.equal(await redis.exists(keys.blocks('port', 'no-such-port')), 0);
  });

  it('an unregistered object type is an error; once registered the same calls work and publish (item 10)', async () => {
    const isUnregistered = (error: unknown) =>
      error instanceof UnregisteredObjectTypeError && /network/.test(error.message);
    await assert.rejects(blocks.addProvisioningComponent('net-1', 'network', 'DHCP'), isUnregistered);
    await assert.rejects(blocks.provisioningComplete('net-1', 'network', 'DHCP'), isUnregistered);
    await assert.rejects(blocks.isObjectBlocked('net-1', 'network'), isUnregistered);
    await assert.rejects(blocks.removeProvisioningComponent('net-1', 'network', 'DHCP'), isUnregistered);
    blocks.registerObjectType('network', (id) => keys.network(id));
    await redis.set(keys.network('net-1'), JSON.stringify({ id: 'net-1' }));
    assert.equal(await blocks.addProvisioningComponent('net-1', 'network', 'DHCP'), 'added');
    assert.equal(await blocks.isObjectBlocked('net-1', 'network'), true);
    assert.equal((await blocks.provisioningComplete('net-1', 'network', 'DHCP')).outcome, 'emitted');
    const [entry] = await completions();
    assert.equal(entry?.routingKey, 'provisioning.complete.network');
  });

  it('completing the same entity twice publishes again when no block remains, under the same event id (one transition)', async () => {
    await blocks.addProvisioningComponent('port-a', 'port', 'L2');
    const first = await blocks.provisioningComplete('port-a', 'port', 'L2');
    const second = await blocks.provisioningComplete('port-a', 'port', 'L2');
    assert.deepEqual([first.outcome, first.removed], ['emitted', true]);
    assert.deepEqual([second.outcome, second.removed], ['emitted', false]);
    const events = await completions();
    assert.equal(events.length, 2);
    assert.equal(events[1]!.id, events[0]!.id, 'an agent retrying its call announces the same transition');
    assert.equal(second.event?.id, first.event?.id, 'the returned event carries the id published');
    assert.equal(first.event?.id, events[0]!.id);
  });

  it('a new provisioning round (a block added, the port set DOWN, a status written) gets a new completion id', async () => {
    const completeTwice = async () => {
      await blocks.provisioningComplete('port-a', 'port', 'L2');
      await blocks.provisioningComplete('port-a', 'port', 'L2');
    };
    await completeTwice();
    await blocks.addProvisioningComponent('port-a', 'port', 'L2');
    await completeTwice();
    assert.equal((await ports.markDown('port-a', null)).outcome, 'unchanged', 'a stored port starts DOWN');
    await redis.hset(keys.port('port-a'), 'status', '"ACTIVE"');
    assert.equal((await ports.markDown('port-a', null)).outcome, 'changed');
    await completeTwice();
    const stored = (await ports.get('port-a'))!;
    const mac = { previous: stored.mac_address, current: stored.mac_address };
    const written = await ports.write(stored.id, stored.revision, { status: 'BUILD' }, mac, [], null);
    assert.equal(written.status, 'ok');
    await completeTwice();
    const ids = (await completions()).map((entry) => entry.id);
    assert.equal(ids.length, 8);
    for (let round = 0; round < 4; round++)
      assert.equal(ids[2 * round + 1], ids[2 * round], `round ${round + 1}: one id for its two completions`);
    assert.equal(new Set(ids).size, 4, 'each round its own id');
  });

  it('two entities completing the same port at the same instant produce exactly one event, for 500 ports (docs/neutron-provisioning-rules.md#races)', async () => {
    const ids = Array.from({ length: 500 }, (_, index) => `race-${index}`);
    for (const id of ids) {
      await storePort(ports, { id });
      await blocks.addProvisioningComponent(id, 'port', 'DHCP');
      await blocks.addProvisioningComponent(id, 'port', 'L2');
    }
    await Promise.all(
      ids.flatMap((id) => [
        blocks.provisioningComplete(id, 'port', 'DHCP'),
        blocks.provisioningComplete(id, 'port', 'L2'),
      ]),
    );
    const events = await completions();
    const perPort = new Map<string, number>();
    for (const entry of events) {
      const id = entry.parsed.type === 'provisioning.complete' ? entry.parsed.data.objectId : '';
      perPort.set(id, (perPort.get(id) ?? 0) + 1);
    }
    assert.equal(events.length, 500);
    assert.ok([...perPort.values()].every((count) => count === 1));
  });
});
