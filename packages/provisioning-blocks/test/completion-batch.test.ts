import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis } from '@lifeguard/testing';
import type { Redis } from 'ioredis';
import { BlockStore, PortStore, ProvisioningKeys } from '../src/index.ts';
import { COMPLETION_REQUEST_VALUES } from '../src/lua/block-scripts.ts';
import { completionScriptCall } from '../src/store/completion-batch.ts';
import { outboxEvents, SOURCE, storePort } from './support.ts';

describe('completionScriptCall (the KEYS and ARGV of the completions of one round)', () => {
  it('lays out each request after the common values, its objects after it', () => {
    const common = { outbox: 'o', portsAwaitingActive: 'w', source: SOURCE };
    const call = (markerKey: string | null, objects: string[]) => ({
      markerKey,
      markerTtlSeconds: markerKey ? 3600 : null,
      markerValue: markerKey ? '{}' : '',
      entity: 'DHCP',
      host: '',
      vifPluggedId: '',
      occurredAt: '2026-12-07T00:00:00.000Z',
      objectType: 'port',
      requestId: '',
      objects: objects.map((id) => ({
        keys: [`r:${id}`, `b:${id}`, `c:${id}`] as const,
        objectId: id,
        offeredEventId: `e:${id}`,
      })),
    });
    const { keys, args } = completionScriptCall([call('m1', ['p1', 'p2']), call(null, ['p3'])], common);
    assert.deepEqual(keys, [
      'o',
      'w',
      'm1',
      'r:p1',
      'b:p1',
      'c:p1',
      'r:p2',
      'b:p2',
      'c:p2',
      'o',
      'r:p3',
      'b:p3',
      'c:p3',
    ]);
    const request = (ttl: number | '', value: string, count: number) => [
      'DHCP',
      ttl,
      value,
      '',
      '',
      '2026-12-07T00:00:00.000Z',
      'port',
      '',
      count,
    ];
    assert.equal(request('', '', 0).length, COMPLETION_REQUEST_VALUES);
    assert.deepEqual(args, [
      SOURCE.service,
      SOURCE.instance,
      2,
      ...request(3600, '{}', 2),
      'p1',
      'e:p1',
      'p2',
      'e:p2',
      ...request('', '', 1),
      'p3',
      'e:p3',
    ]);
  });
});

describe('completions requested together (one script call per round of I/O)', () => {
  let redis: Redis;
  let keys: ProvisioningKeys;
  let blocks: BlockStore;
  const prefixes: string[] = [];

  before(() => {
    redis = testRedis();
  });
  beforeEach(async () => {
    const prefix = randomKeyPrefix('completion-batch');
    prefixes.push(prefix);
    keys = new ProvisioningKeys(prefix);
    blocks = new BlockStore(redis, keys, SOURCE);
    const ports = new PortStore(redis, keys, SOURCE);
    for (const id of ['port-a', 'port-b']) {
      await storePort(ports, { id });
      await blocks.addProvisioningComponent(id, 'port', 'DHCP');
      await blocks.addProvisioningComponent(id, 'port', 'L2');
    }
  });
  after(async () => {
    for (const each of prefixes) await deleteKeysWithPrefix(redis, each);
    await redis.quit();
  });

  const marker = (key: string) => ({ key: `${keys.handledRequest(key)}`, ttlSeconds: 60, value: '{}' });

  it('apply in the order requested: both entities of a port in one round give one event, a copy of a request is a duplicate', async () => {
    const [dhcp, l2, copy, other] = await Promise.all([
      blocks.provisioningCompleteMany(['port-a'], 'port', 'DHCP', { handled: marker('u1') }),
      blocks.provisioningCompleteMany(['port-a'], 'port', 'L2', { handled: marker('u2') }),
      blocks.provisioningCompleteMany(['port-a'], 'port', 'L2', { handled: marker('u2') }),
      blocks.provisioningCompleteMany(['port-b'], 'port', 'DHCP'),
    ]);
    assert.deepEqual(
      dhcp.results.map((each) => each.outcome),
      ['blocked'],
    );
    assert.deepEqual(
      l2.results.map((each) => each.outcome),
      ['emitted'],
    );
    assert.equal(copy.duplicate, true);
    assert.deepEqual(
      other.results.map((each) => each.outcome),
      ['blocked'],
    );
    const events = (await outboxEvents(redis, keys)).filter(
      (entry) => entry.type === 'provisioning.complete',
    );
    assert.deepEqual(
      events.map((entry) =>
        entry.parsed.type === 'provisioning.complete' ? entry.parsed.data.objectId : '',
      ),
      ['port-a'],
    );
  });

  it('a request a Redis command fails for fails alone; the others of its round take effect', async () => {
    await redis.set(keys.port('port-b'), 'corrupt');
    const [good, broken] = await Promise.allSettled([
      blocks.provisioningCompleteMany(['port-a'], 'port', 'DHCP', { handled: marker('u3') }),
      blocks.provisioningCompleteMany(['port-b'], 'port', 'L2', { host: 'compute-1', handled: marker('u4') }),
    ]);
    assert.equal(good.status, 'fulfilled');
    assert.equal(broken.status, 'rejected');
    assert.match(String((broken as PromiseRejectedResult).reason), /WRONGTYPE/);
    assert.deepEqual(await blocks.blockingEntities('port-a', 'port'), ['L2']);
    // Its marker was not written: the request handled again does it again.
    assert.equal(await redis.exists(keys.handledRequest('u4')), 0);
  });
});

describe('provisioning.complete events marked together (one portProvisionedScript call per round of I/O)', () => {
  let redis: Redis;
  let keys: ProvisioningKeys;
  let ports: PortStore;
  const prefixes: string[] = [];

  before(() => {
    redis = testRedis();
  });
  beforeEach(async () => {
    const prefix = randomKeyPrefix('provisioned-batch');
    prefixes.push(prefix);
    keys = new ProvisioningKeys(prefix);
    ports = new PortStore(redis, keys, SOURCE);
    for (const id of ['port-c', 'port-d'])
      await storePort(ports, { id, 'binding:host_id': 'compute-1', 'binding:vif_type': 'ovs' });
  });
  after(async () => {
    for (const each of prefixes) await deleteKeysWithPrefix(redis, each);
    await redis.quit();
  });

  it('apply in order: the first event activates, a second one finds the port ACTIVE, a copy is a duplicate, a failure stays its own', async () => {
    await redis.set(keys.port('port-d'), 'corrupt');
    const [first, second, copy, broken] = await Promise.allSettled([
      ports.markProvisioned('port-c', 'e-1', 'L2', 60, true),
      ports.markProvisioned('port-c', 'e-2', 'DHCP', 60, true),
      ports.markProvisioned('port-c', 'e-1', 'L2', 60, true),
      ports.markProvisioned('port-d', 'e-3', 'L2', 60, true),
    ]);
    assert.deepEqual(
      [first, second, copy].map((each) => each.status === 'fulfilled' && each.value.outcome),
      ['activated', 'already_active', 'duplicate'],
    );
    assert.equal(broken.status, 'rejected');
    assert.equal((await ports.get('port-c'))?.status, 'ACTIVE');
    const changes = (await outboxEvents(redis, keys)).filter((entry) => entry.type === 'port.status.changed');
    assert.equal(changes.length, 1);
  });
});
