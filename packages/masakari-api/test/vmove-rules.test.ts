import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nameBasedUuid } from '@lifeguard/contracts';
import { chooseMicroversion } from '../src/api/microversion.ts';
import { policyRule, type ResourceName, route, servedAt } from '../src/api/router.ts';
import { vmoveView } from '../src/api/views.ts';
import { type VmoveFacts, type VmoveRecord, vmoveUuid } from '../src/index.ts';
import { sameFacts } from '../src/store/vmove-writes.ts';

const NOTIFICATION = '07a331b8-df15-4582-b121-73ed3541a408';
const INSTANCE = 'b9837317-a5b8-44f4-93b4-45500c562bb8';

describe('vmove routes (nested under their notification)', () => {
  const cases: Array<[string, string, string]> = [
    ['GET', `/v1/notifications/${NOTIFICATION}/vmoves`, `vmoves index project=null parent=${NOTIFICATION}`],
    ['GET', '/v1/3f2a9c/notifications/n/vmoves.json', 'vmoves index project=3f2a9c parent=n'],
    ['GET', '/v1/notifications/n/vmoves/v', 'vmoves show project=null parent=n id=v'],
    ['GET', '/v1/0a1b/notifications/n/vmoves/v.json', 'vmoves show project=0a1b parent=n id=v'],
    ['POST', '/v1/notifications/n/vmoves', 'not-allowed create'],
    ['PUT', '/v1/notifications/n/vmoves/v', 'not-allowed update'],
    ['DELETE', '/v1/notifications/n/vmoves/v', 'not-allowed delete'],
    ['PATCH', '/v1/notifications/n/vmoves/v', 'not-found'],
    ['GET', '/v1/notifications/n/vmoves/v/more', 'not-found'],
    ['GET', '/v1/segments/s/vmoves', 'not-found'],
    ['GET', '/v1/notifications/n/hosts', 'not-found'],
    ['POST', '/v1/notifications', 'notifications create project=null'],
    ['GET', '/v1/segments/s/hosts/h', 'hosts show project=null parent=s id=h'],
  ];
  for (const [method, path, expected] of cases) {
    it(`${method} ${path} → ${expected}`, () => {
      const found = route(method, path);
      const text =
        found.kind === 'resource'
          ? [
              found.resource,
              found.action,
              `project=${found.projectId}`,
              ...(found.parentId ? [`parent=${found.parentId}`] : []),
              ...(found.id ? [`id=${found.id}`] : []),
            ].join(' ')
          : found.kind === 'not-allowed'
            ? `not-allowed ${found.action}`
            : found.kind;
      assert.equal(text, expected);
    });
  }
  it('names the policy rules as Masakari 15 does', () => {
    assert.equal(policyRule('vmoves', 'index'), 'os_masakari_api:vmoves:index');
    assert.equal(policyRule('vmoves', 'show'), 'os_masakari_api:vmoves:detail');
  });
});

describe('which resources each microversion serves (vmoves from 1.3)', () => {
  const cases: Array<[ResourceName, string | undefined, boolean]> = [
    ['vmoves', undefined, false],
    ['vmoves', 'instance-ha 1.0', false],
    ['vmoves', 'instance-ha 1.2', false],
    ['vmoves', 'instance-ha 1.3', true],
    ['vmoves', 'instance-ha latest', true],
    ['notifications', undefined, true],
    ['notifications', 'instance-ha 1.3', true],
    ['segments', 'instance-ha 1.0', true],
    ['hosts', 'instance-ha 1.3', true],
  ];
  for (const [resource, header, served] of cases) {
    it(`${resource} at ${header ?? '(no header)'}: ${served ? 'served' : '404'}`, () => {
      const choice = chooseMicroversion(header);
      assert.equal(choice.kind, 'version');
      if (choice.kind === 'version') assert.equal(servedAt(resource, choice.version), served);
    });
  }
});

describe('vmove uuids (the same on every write and read)', () => {
  it('are the name-based UUID of the instance in the notification', () => {
    const made = vmoveUuid(NOTIFICATION, INSTANCE);
    assert.equal(made, nameBasedUuid(NOTIFICATION, INSTANCE));
    assert.equal(made, vmoveUuid(NOTIFICATION, INSTANCE.toUpperCase()));
    assert.match(made, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
  it('differ between instances and between notifications', () => {
    const others = [
      vmoveUuid(NOTIFICATION, '1f4c9a3e-55d2-4f0a-9a34-6a1c1c2f7d10'),
      vmoveUuid('1f4c9a3e-55d2-4f0a-9a34-6a1c1c2f7d10', INSTANCE),
    ];
    assert.equal(new Set([vmoveUuid(NOTIFICATION, INSTANCE), ...others]).size, 3);
  });
});

describe('vmove records and their view', () => {
  const facts: VmoveFacts = {
    instanceUuid: INSTANCE,
    instanceName: 'vm1',
    sourceHost: 'compute-3',
    destHost: 'compute-1',
    startTime: '2026-12-07T05:00:01.000000',
    endTime: '2026-12-07T05:00:09.000000',
    type: 'evacuation',
    status: 'succeeded',
    message: null,
  };
  const record: VmoveRecord = {
    id: 7,
    uuid: vmoveUuid(NOTIFICATION, INSTANCE),
    notificationUuid: NOTIFICATION,
    ...facts,
    createdAt: '2026-12-07T05:00:02.000000',
    updatedAt: '2026-12-07T05:00:10.000000',
    deletedAt: null,
    deleted: false,
  };
  const changed: Array<[string, Partial<VmoveFacts>, boolean]> = [
    ['nothing', {}, true],
    ['the status', { status: 'failed' }, false],
    ['the destination', { destHost: null }, false],
    ['the message', { message: 'timeout' }, false],
    ['the end', { endTime: '2026-12-07T05:00:10.000000' }, false],
  ];
  for (const [name, change, same] of changed) {
    it(`a record with ${name} changed is ${same ? 'up to date' : 'written again'}`, () =>
      assert.equal(sameFacts(record, { ...facts, ...change }), same));
  }
  it('shows Masakari 15’s keys in the order of its api samples', () => {
    assert.deepEqual(Object.keys(vmoveView(record)), [
      'created_at',
      'updated_at',
      'deleted_at',
      'deleted',
      'id',
      'uuid',
      'notification_uuid',
      'instance_uuid',
      'instance_name',
      'source_host',
      'dest_host',
      'start_time',
      'end_time',
      'status',
      'type',
      'message',
    ]);
    assert.equal(vmoveView(record).dest_host, 'compute-1');
  });
});
