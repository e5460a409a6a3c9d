import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { portStatusChangedEvent, portVifPluggedEvent, provisioningCompleteEvent } from '@lifeguard/contracts';
import { type OutboxEvent, outboxFieldsOf, readOutboxEntry } from '../src/index.ts';

const envelope = (id: string) => ({
  id,
  occurredAt: '2026-12-01T10:00:00.000Z',
  source: { service: 'provisioning-blocks', instance: 'test:1' },
});

const events: OutboxEvent[] = [
  provisioningCompleteEvent(envelope('5b0f4a40-7c1b-4c55-9c55-0d5f3c3b1a01'), {
    objectType: 'port',
    objectId: 'port-1',
    entity: 'DHCP',
    requestId: 'req-7',
  }),
  provisioningCompleteEvent(envelope('5b0f4a40-7c1b-4c55-9c55-0d5f3c3b1a02'), {
    objectType: 'network',
    objectId: 'net-1',
    entity: 'L2',
  }),
  portStatusChangedEvent(envelope('5b0f4a40-7c1b-4c55-9c55-0d5f3c3b1a03'), {
    portId: 'port-1',
    previousStatus: 'DOWN',
    status: 'ACTIVE',
    deviceId: 'vm-1',
    deviceOwner: 'compute:nova',
    host: 'compute-1',
    notifyNova: false,
  }),
  portStatusChangedEvent(envelope('5b0f4a40-7c1b-4c55-9c55-0d5f3c3b1a04'), {
    portId: 'port-2',
    previousStatus: 'ACTIVE',
    status: 'DOWN',
    deviceId: '',
    deviceOwner: 'network:dhcp',
    host: '',
  }),
  portVifPluggedEvent(envelope('5b0f4a40-7c1b-4c55-9c55-0d5f3c3b1a05'), {
    portId: 'port-3',
    deviceId: 'vm-3',
    deviceOwner: 'compute:nova',
    host: 'compute-2',
    boundHost: 'compute-1',
  }),
];

describe('outbox entries: the facts a script commits, and the event built from them', () => {
  it('every provisioning event written as facts reads back as the same event, id included, however often it is read', () => {
    for (const event of events) {
      const fields = outboxFieldsOf(event);
      assert.deepEqual(readOutboxEntry(fields), { event });
      assert.deepEqual(readOutboxEntry(fields), readOutboxEntry([...fields]));
    }
  });

  it('an entry in the earlier layout (the event JSON in `event`) is validated and read as it is', () => {
    const event = events[0]!;
    assert.deepEqual(
      readOutboxEntry([
        'id',
        event.id,
        'type',
        event.type,
        'routingKey',
        'x',
        'event',
        JSON.stringify(event),
      ]),
      { event },
    );
    const invalid = { ...event, schemaVersion: 2 };
    const reading = readOutboxEntry(['event', JSON.stringify(invalid)]);
    assert.ok('unpublishable' in reading);
    assert.match(reading.unpublishable, /schemaVersion/);
  });

  it('facts that give no valid event are reported with the field at fault, never thrown', () => {
    const fields = outboxFieldsOf(events[2]!);
    const badId = fields.slice();
    badId[badId.indexOf('id') + 1] = 'not-a-uuid';
    const cases: Array<[string[], RegExp]> = [
      [badId, /event: id: Invalid UUID/],
      [
        fields.map((value, index) => (fields[index - 1] === 'port:id' ? '{not json' : value)),
        /port:id: not JSON/,
      ],
      [fields.map((value, index) => (fields[index - 1] === 'port:id' ? 'null' : value)), /portId/],
      [fields.map((value) => (value === 'port.status.changed' ? 'host.down' : value)), /type/],
      [['type', 'provisioning.complete'], /id: missing/],
      [
        fields.filter((value, index) => value !== 'port:id' && fields[index - 1] !== 'port:id'),
        /port:id: missing/,
      ],
      [[], /type: missing/],
    ];
    for (const [input, reason] of cases) {
      const reading = readOutboxEntry(input);
      assert.ok('unpublishable' in reading, `unpublishable: ${input.join(' ')}`);
      assert.match(reading.unpublishable, reason);
    }
  });
});
