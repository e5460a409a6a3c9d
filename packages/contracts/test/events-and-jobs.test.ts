import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { v5 as uuidV5 } from 'uuid';
import {
  ContractViolationError,
  createEvent,
  evacuateHostJobId,
  evacuateInstanceJobId,
  eventIncidentId,
  eventRoutingKey,
  fencingJobId,
  IncidentId,
  LifeguardEvent,
  nameBasedUuid,
  powerOnJobId,
  reenableJobId,
  transitionEventId,
} from '../src/index.ts';

const source = { service: 'node-monitor', instance: 'test:1' };
const evidence = {
  serviceId: '4c8f5a3e-1111-4222-8333-944455556666',
  state: 'down',
  status: 'enabled',
  forcedDown: false,
  updatedAt: '2026-11-30T08:00:00.000Z',
  ageSeconds: 42,
  disabledReason: null,
  zone: 'nova',
};

describe('events', () => {
  it('createEvent gives a unique id, schema version 1 and an ISO occurredAt', () => {
    const first = createEvent(
      'host.down',
      {
        host: 'compute-1',
        incidentId: 'compute-1.20261130T080000Z.ab12',
        fencingToken: 3,
        evidence,
        kdumpFenced: false,
        resume: false,
      },
      source,
    );
    const second = createEvent(
      'host.reenabled',
      { host: 'compute-1', serviceId: 's', incidentId: null },
      source,
    );
    assert.notEqual(first.id, second.id);
    assert.equal(first.schemaVersion, 1);
    assert.ok(!Number.isNaN(Date.parse(first.occurredAt)));
    assert.deepEqual(LifeguardEvent.parse(JSON.parse(JSON.stringify(first))), first);
  });

  it('createEvent rejects data that breaks the schema, naming the field', () => {
    assert.throws(
      () =>
        createEvent(
          'host.down',
          // @ts-expect-error: host must be a string
          { host: 7, incidentId: 'i-1', fencingToken: 1, evidence, kdumpFenced: false, resume: false },
          source,
        ),
      (error: unknown) => error instanceof ContractViolationError && /data\.host/.test(error.message),
    );
  });

  it('routes provisioning completion by object type and every other event by its type', () => {
    const complete = createEvent(
      'provisioning.complete',
      { objectType: 'port', objectId: 'p', entity: 'L2' },
      source,
    );
    assert.equal(eventRoutingKey(complete), 'provisioning.complete.port');
    const fenced = createEvent(
      'host.fenced',
      {
        host: 'compute-1',
        incidentId: 'inc-1',
        proof: 'power-off-confirmed',
        method: 'redfish',
        attempts: 1,
        durationSeconds: 2.5,
      },
      source,
    );
    assert.equal(eventRoutingKey(fenced), 'host.fenced');
    assert.equal(eventIncidentId(fenced), 'inc-1');
    assert.equal(eventIncidentId(complete), null);
  });

  it('provisioning events carry the optional request id, Nova flag and the direct vif-plugged event', () => {
    const complete = createEvent(
      'provisioning.complete',
      { objectType: 'port', objectId: 'p', entity: 'DHCP', requestId: 'req-1' },
      source,
    );
    assert.equal(complete.data.requestId, 'req-1');
    const changed = createEvent(
      'port.status.changed',
      {
        portId: 'p',
        previousStatus: 'DOWN',
        status: 'ACTIVE',
        deviceId: 'd',
        deviceOwner: 'compute:nova',
        host: 'compute-1',
        notifyNova: false,
      },
      source,
    );
    assert.equal(changed.data.notifyNova, false);
    const plugged = createEvent(
      'port.vif.plugged',
      { portId: 'p', deviceId: 'd', deviceOwner: 'compute:nova', host: 'compute-2', boundHost: 'compute-1' },
      source,
    );
    assert.equal(eventRoutingKey(plugged), 'port.vif.plugged');
    assert.throws(
      () =>
        createEvent(
          'port.vif.plugged',
          // @ts-expect-error: boundHost is required
          { portId: 'p', deviceId: 'd', deviceOwner: 'compute:nova', host: 'compute-2' },
          source,
        ),
      /boundHost/,
    );
  });
});

describe('job ids and incident ids', () => {
  it('job ids are deterministic, never contain ":" and are never all digits', () => {
    const ids = [
      fencingJobId('compute:1', '123'),
      powerOnJobId('compute-1', 'inc'),
      evacuateHostJobId('compute-1.example.org', 'inc'),
      evacuateInstanceJobId('9a8e6f2c-4b1d-4c3e-8f7a-0d1e2f3a4b5c', 'inc'),
      reenableJobId('compute-1', null),
    ];
    for (const id of ids) {
      assert.ok(!id.includes(':'), id);
      assert.ok(!/^\d+$/.test(id), id);
    }
    assert.equal(fencingJobId('compute-1', 'inc-7'), fencingJobId('compute-1', 'inc-7'));
    assert.equal(fencingJobId('compute:1', '123'), 'fence.compute_1.123');
  });

  it('incident ids reject ":" and all-digit values', () => {
    assert.equal(IncidentId.safeParse('compute-1.20261130T080000Z.ab12').success, true);
    assert.equal(IncidentId.safeParse('a:b').success, false);
    assert.equal(IncidentId.safeParse('12345').success, false);
    assert.equal(IncidentId.safeParse('').success, false);
  });
});

describe('transition event ids (docs/design.md#event-ids)', () => {
  it('are the same UUID for every publication of one transition, and differ between transitions', () => {
    const fenced = transitionEventId('host.fenced', 'compute-3.20261130T081502Z.7f3a');
    assert.equal(fenced, transitionEventId('host.fenced', 'compute-3.20261130T081502Z.7f3a'));
    assert.match(fenced, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const others = [
      transitionEventId('host.fenced', 'compute-3.20261130T081502Z.7f3b'),
      transitionEventId('host.evacuated', 'compute-3.20261130T081502Z.7f3a'),
      transitionEventId('instance.evacuated', 'compute-3.20261130T081502Z.7f3a', 'server-a'),
      transitionEventId('instance.evacuated', 'compute-3.20261130T081502Z.7f3a', 'server-b'),
    ];
    assert.equal(new Set([fenced, ...others]).size, 5);
    // The ids of events already published stay the same: RFC 9562 version 5, as the uuid package makes them.
    for (const parts of [['compute-3.20261130T081502Z.7f3a'], ['x', 'port:é-ü'], ['']]) {
      assert.equal(
        transitionEventId('instance.evacuated', ...parts),
        uuidV5(JSON.stringify(['instance.evacuated', ...parts]), '5b0e2d8c-3f4a-4c1e-9b7d-6a2f1e8c4d30'),
      );
    }
    const event = createEvent(
      'host.evacuated',
      {
        host: 'compute-3',
        incidentId: 'compute-3.20261130T081502Z.7f3a',
        mode: 'smart',
        evacuatedInstances: ['server-a'],
        durationSeconds: 12,
        poweredOn: true,
      },
      { service: 'evacuation-worker', instance: 'test' },
      new Date(),
      others[1],
    );
    assert.equal(event.id, others[1]);
  });
});

describe('name-based UUIDs (RFC 9562 version 5)', () => {
  const cases: Array<[string, string, string]> = [
    ['6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'www.example.com', '2ed6657d-e927-568b-95e1-2665a8aea6a2'],
    ['07A331B8DF154582B12173ED3541A408', 'b9837317-a5b8-44f4-93b4-45500c562bb8', ''],
    ['07a331b8-df15-4582-b121-73ed3541a408', 'port:é-ü', ''],
  ];
  for (const [namespace, name, expected] of cases) {
    it(`${namespace} / ${name}: as the uuid package makes it`, () => {
      const made = nameBasedUuid(namespace, name);
      assert.equal(
        made,
        uuidV5(name, namespace.toLowerCase().replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5')),
      );
      if (expected !== '') assert.equal(made, expected);
    });
  }
  it('refuses a namespace that is not a UUID', () => {
    assert.throws(() => nameBasedUuid('not-a-uuid', 'x'), /not a UUID: not-a-uuid/);
  });
});
