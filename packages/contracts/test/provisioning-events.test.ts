import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ContractViolationError,
  EVENT_SCHEMA_VERSION,
  eventRoutingKey,
  portStatusChangedEvent,
  portVifPluggedEvent,
  provisioningCompleteEvent,
} from '../src/index.ts';

const envelope = {
  id: '9d7c1b0e-2f4a-4e8b-9c3d-1a2b3c4d5e6f',
  occurredAt: '2026-12-01T10:00:00.000Z',
  source: { service: 'provisioning-blocks', instance: 'host-a:42' },
};

describe('provisioning event builders', () => {
  it('keep the id, time and source they are given and add the schema version', () => {
    const event = provisioningCompleteEvent(envelope, { objectType: 'port', objectId: 'p1', entity: 'L2' });
    assert.deepEqual(event, {
      ...envelope,
      schemaVersion: EVENT_SCHEMA_VERSION,
      type: 'provisioning.complete',
      data: { objectType: 'port', objectId: 'p1', entity: 'L2' },
    });
    assert.equal(eventRoutingKey(event), 'provisioning.complete.port');
  });

  it('leave out a requestId that is empty or null, keep one that is given', () => {
    for (const requestId of ['', null, undefined]) {
      const event = provisioningCompleteEvent(envelope, {
        objectType: 'port',
        objectId: 'p1',
        entity: 'L2',
        requestId,
      });
      assert.equal('requestId' in event.data, false);
    }
    const event = provisioningCompleteEvent(envelope, {
      objectType: 'port',
      objectId: 'p1',
      entity: 'L2',
      requestId: 'req-1',
    });
    assert.equal(event.data.requestId, 'req-1');
  });

  it('reject data that breaks the schema with ContractViolationError naming the field', () => {
    assert.throws(
      () => provisioningCompleteEvent(envelope, { objectType: 'port', objectId: '', entity: 'L2' }),
      (error: unknown) => error instanceof ContractViolationError && /data\.objectId/.test(error.message),
    );
    assert.throws(
      () =>
        portStatusChangedEvent(
          { ...envelope, id: 'not-a-uuid' },
          {
            portId: 'p1',
            previousStatus: 'DOWN',
            status: 'ACTIVE',
            deviceId: '',
            deviceOwner: '',
            host: '',
          },
        ),
      (error: unknown) => error instanceof ContractViolationError && /\bid\b/.test(error.message),
    );
    assert.throws(
      () =>
        portVifPluggedEvent(envelope, {
          portId: 'p1',
          deviceId: 'vm',
          deviceOwner: 'compute:nova',
          host: 'b',
          boundHost: null as unknown as string,
        }),
      (error: unknown) => error instanceof ContractViolationError && /boundHost/.test(error.message),
    );
  });
});
