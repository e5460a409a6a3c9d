import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type EventOf, portStatusChangedEvent } from '@lifeguard/contracts';
import type { Redis } from 'ioredis';
import { luaOutboxFields } from '../src/lua/outbox-xadd.ts';
import { outboxFieldsOf, readOutboxEntry } from '../src/store/outbox-entry.ts';
import { isOutboxEventType, type OutboxEventType, outboxFieldNames } from '../src/store/outbox-fields.ts';
import {
  COMPUTE_HOST,
  computePort,
  portStatusSubscriberWithoutAmqp,
  portUuid,
  SOURCE,
  type Stores,
  seedStoresBeforeEachTest,
} from './support.ts';

/** The field names of a stream entry (alternating names and values), in order. */
const namesOf = (fields: ReadonlyArray<string>) => fields.filter((_, index) => index % 2 === 0);

/**
 * The field table (store/outbox-fields.ts) is the one list of an outbox entry's fields: every Lua
 * script that appends an entry, and the TypeScript encoder, write exactly its fields in its order.
 */
describe('outbox fields: every writer of an outbox entry writes exactly the table of store/outbox-fields.ts', () => {
  let redis: Redis;
  let stores: Stores;
  seedStoresBeforeEachTest('outbox-fields', (fresh) => {
    ({ redis, stores } = fresh);
  });

  it('the Lua scripts (completion, direct vif-plugged, ACTIVE, DOWN) and a port write append the table’s fields, in order, that read back as events', async () => {
    const subscriber = portStatusSubscriberWithoutAmqp(stores.ports);
    const id = portUuid(1);
    await stores.portProvisioning.create(computePort(id, { fixed_ips: [] }));
    // completeScript, the port bound elsewhere: port.vif.plugged.
    await stores.callbacks.updateDeviceUp({ device: id, host: 'compute-elsewhere' }, 'req-vif');
    // completeScript: provisioning.complete.
    const completed = await stores.callbacks.updateDeviceUp({ device: id, host: COMPUTE_HOST }, 'req-up');
    assert.equal(completed.outcome, 'emitted');
    const completion = await lastEntry(redis, stores);
    assert.equal(completion.type, 'provisioning.complete');
    // portProvisionedScript: port.status.changed to ACTIVE.
    assert.equal(await subscriber.handle(completion.event as EventOf<'provisioning.complete'>), 'activated');
    // portDownScript: port.status.changed to DOWN.
    await stores.callbacks.updateDeviceDown({ device: id, host: COMPUTE_HOST });
    // writePortScript: an event encoded in TypeScript (outboxFieldsOf).
    const stored = (await stores.ports.get(id))!;
    const written = await stores.ports.write(
      id,
      stored.revision,
      { status: 'BUILD' },
      { previous: stored.mac_address, current: stored.mac_address },
      [],
      portStatusChangedEvent(
        { id: '5b0f4a40-7c1b-4c55-9c55-0d5f3c3b1a07', occurredAt: new Date().toISOString(), source: SOURCE },
        {
          portId: id,
          previousStatus: 'DOWN',
          status: 'BUILD',
          deviceId: stored.device_id,
          deviceOwner: stored.device_owner,
          host: COMPUTE_HOST,
        },
      ),
    );
    assert.equal(written.status, 'ok');

    const entries = await redis.xrange(stores.keys.outbox, '-', '+');
    const types = entries.map(([, fields]) => fields[fields.indexOf('type') + 1]);
    assert.deepEqual(types, [
      'port.vif.plugged',
      'provisioning.complete',
      'port.status.changed',
      'port.status.changed',
      'port.status.changed',
    ]);
    for (const [streamId, fields] of entries) {
      const type = fields[fields.indexOf('type') + 1]!;
      assert.ok(isOutboxEventType(type), type);
      assert.deepEqual(namesOf(fields), outboxFieldNames(type), `fields of ${type} entry ${streamId}`);
      const reading = readOutboxEntry(fields);
      assert.ok('event' in reading, `${type} entry ${streamId}: ${JSON.stringify(reading)}`);
      assert.deepEqual(outboxFieldsOf(reading.event as EventOf<OutboxEventType>), fields);
    }
  });

  it('a script whose field list differs from the table is refused when its text is made', () => {
    const envelope = { id: 'ARGV[1]', occurredAt: 'ARGV[2]', service: 'ARGV[3]', instance: 'ARGV[4]' };
    const data = { objectType: 'ARGV[5]', objectId: 'ARGV[6]', entity: 'ARGV[7]', requestId: 'ARGV[8]' };
    assert.equal(
      luaOutboxFields('provisioning.complete', { ...envelope, ...data }),
      "'id', ARGV[1], 'type', 'provisioning.complete', 'occurredAt', ARGV[2], 'service', ARGV[3], " +
        "'instance', ARGV[4], 'objectType', ARGV[5], 'objectId', ARGV[6], 'entity', ARGV[7], 'requestId', ARGV[8]",
    );
    const { requestId: _left, ...withoutRequestId } = data;
    assert.throws(
      () => luaOutboxFields('provisioning.complete', { ...envelope, ...withoutRequestId }),
      /provisioning\.complete.*missing requestId/,
    );
    assert.throws(
      () => luaOutboxFields('provisioning.complete', { ...envelope, ...data, host: 'ARGV[9]' }),
      /provisioning\.complete.*not in the table host/,
    );
  });
});

/** The newest outbox entry, with its type and event. */
async function lastEntry(
  redis: Redis,
  stores: Stores,
): Promise<{ type: string; event: EventOf<OutboxEventType> }> {
  const [newest] = await redis.xrevrange(stores.keys.outbox, '+', '-', 'COUNT', 1);
  const reading = readOutboxEntry(newest?.[1] ?? []);
  if (!('event' in reading)) throw new Error(`unpublishable: ${reading.unpublishable}`);
  return { type: reading.event.type, event: reading.event as EventOf<OutboxEventType> };
}
