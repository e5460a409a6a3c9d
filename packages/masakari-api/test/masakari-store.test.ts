import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis } from '@lifeguard/testing';
import {
  DuplicateNotificationError,
  HostExistsError,
  HostInUseError,
  HostNotFoundByNameError,
  HostNotFoundUnderSegmentError,
  HostOnMaintenanceError,
  MasakariStore,
  NotificationNotFoundError,
  NotificationStatusTransitionError,
  NotificationWithoutVmovesError,
  parseDateTime,
  SegmentExistsError,
  SegmentInUseError,
  type VmoveFacts,
  vmoveUuid,
} from '../src/index.ts';
import { SegmentWrites } from '../src/store/segment-writes.ts';

const redis = testRedis();
const prefixes: string[] = [];
after(async () => {
  for (const prefix of prefixes) await deleteKeysWithPrefix(redis, prefix);
  redis.disconnect();
});

const clock = new Date('2026-12-07T02:00:00.123Z');
function newStore() {
  const prefix = randomKeyPrefix('masakari-store');
  prefixes.push(prefix);
  const store = new MasakariStore({ redis, keyPrefix: prefix, now: () => clock });
  return { store, writes: new SegmentWrites(store) };
}
const novaKnows = async () => {};
const segmentFields = (name: string) => ({
  name,
  description: null,
  serviceType: 'COMPUTE',
  recoveryMethod: 'auto' as const,
  enabled: true,
});
const hostFields = (name: string, flags: { reserved?: boolean; onMaintenance?: boolean } = {}) => ({
  name,
  type: 'COMPUTE',
  controlAttributes: 'SSH',
  reserved: flags.reserved ?? false,
  onMaintenance: flags.onMaintenance ?? false,
});
const notification = (hostname: string, time: string, payload: Record<string, string>) => ({
  type: 'COMPUTE_HOST' as const,
  hostname,
  generatedTime: parseDateTime(time)!,
  payload,
});
const stopped = { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' };

describe('Masakari store', () => {
  it('keeps segment names unique among live segments, with integer ids and Masakari timestamps', async () => {
    const { store, writes } = newStore();
    const first = await writes.createSegment(segmentFields('segment-a'));
    assert.equal(first.id, 1);
    assert.equal(first.createdAt, '2026-12-07T02:00:00.123000');
    assert.equal(first.updatedAt, null);
    await assert.rejects(writes.createSegment(segmentFields('segment-a')), SegmentExistsError);
    await writes.deleteSegment(first.uuid);
    assert.equal(await store.getSegment(first.uuid), null);
    const again = await writes.createSegment(segmentFields('segment-a'));
    assert.ok(again.id > first.id, 'a new id after a soft delete');
    const deleted = JSON.parse((await redis.get(store.keys.segment(first.uuid)))!);
    assert.equal(deleted.deleted, true, 'the deleted record is kept');
  });

  it('keeps host names unique across segments and lists a segment’s hosts, reserved ones included', async () => {
    const { store, writes } = newStore();
    const a = await writes.createSegment(segmentFields('a'));
    const b = await writes.createSegment(segmentFields('b'));
    const h1 = await writes.createHost(a.uuid, hostFields('compute-1'), novaKnows);
    await writes.createHost(a.uuid, hostFields('compute-2', { reserved: true }), novaKnows);
    await assert.rejects(writes.createHost(b.uuid, hostFields('compute-1'), novaKnows), HostExistsError);
    assert.deepEqual(
      (await store.listSegmentHosts(a.uuid)).map((host) => [host.name, host.reserved]),
      [
        ['compute-1', false],
        ['compute-2', true],
      ],
    );
    assert.equal((await store.getHostByName('compute-1'))?.uuid, h1.uuid);
    await assert.rejects(writes.deleteHost(b.uuid, h1.uuid), HostNotFoundUnderSegmentError);
  });

  it('accepts one notification of a flood of duplicates sent at once, and refuses the rest with 409', async () => {
    const { store, writes } = newStore();
    const segment = await writes.createSegment(segmentFields('flood'));
    await writes.createHost(segment.uuid, hostFields('compute-1'), novaKnows);
    const results = await Promise.allSettled(
      Array.from({ length: 25 }, (_, index) =>
        store.createNotification(notification('compute-1', `2026-12-07T02:00:${10 + index}`, stopped), 180),
      ),
    );
    const accepted = results.filter((result) => result.status === 'fulfilled');
    assert.equal(accepted.length, 1);
    for (const result of results)
      if (result.status === 'rejected') assert.ok(result.reason instanceof DuplicateNotificationError);
    assert.equal((await store.listNotifications()).length, 1);
    assert.deepEqual(await store.unqueuedNotifications(), [
      (accepted[0] as PromiseFulfilledResult<{ notificationUuid: string }>).value.notificationUuid,
    ]);
  });

  it('judges duplicates as Masakari does: same host, type and payload, generated at most 180 s earlier or later', async () => {
    const { store, writes } = newStore();
    const segment = await writes.createSegment(segmentFields('dup'));
    await writes.createHost(segment.uuid, hostFields('compute-1'), novaKnows);
    await store.createNotification(notification('compute-1', '2026-12-07T02:00:00', stopped), 180);
    const cases: Array<[string, Record<string, string>, boolean]> = [
      ['2026-12-07T02:02:59', stopped, true],
      ['2026-12-07T01:58:00', stopped, true],
      ['2026-12-07T02:03:01Z', { ...stopped, host_status: 'UNKNOWN' }, false],
    ];
    for (const [time, payload, duplicate] of cases) {
      const attempt = store.createNotification(notification('compute-1', time, payload), 180);
      if (duplicate) await assert.rejects(attempt, DuplicateNotificationError, time);
      else await attempt;
    }
    await store.createNotification(notification('compute-1', '2026-12-07T02:10:00', stopped), 180);
  });

  it('answers 400 for an unknown host and 409 for a host on maintenance, writing nothing', async () => {
    const { store, writes } = newStore();
    const segment = await writes.createSegment(segmentFields('m'));
    await writes.createHost(segment.uuid, hostFields('compute-9', { onMaintenance: true }), novaKnows);
    await assert.rejects(
      store.createNotification(notification('nowhere', '2026-12-07T02:00:00', stopped), 180),
      (error: unknown) => error instanceof HostNotFoundByNameError && error.status === 400,
    );
    await assert.rejects(
      store.createNotification(notification('compute-9', '2026-12-07T02:00:00', stopped), 180),
      (error: unknown) => error instanceof HostOnMaintenanceError && error.status === 409,
    );
    assert.deepEqual(await store.listNotifications(), []);
  });

  it('follows the lifecycle, keeps the segment in use until a final status, and upserts workflow details', async () => {
    const { store, writes } = newStore();
    const segment = await writes.createSegment(segmentFields('life'));
    const host = await writes.createHost(segment.uuid, hostFields('compute-1'), novaKnows);
    const created = await store.createNotification(
      notification('compute-1', '2026-12-07T02:00:00', stopped),
      180,
    );
    const uuid = created.notificationUuid;
    await assert.rejects(writes.updateSegment(segment.uuid, { description: 'x' }), SegmentInUseError);
    await assert.rejects(writes.deleteHost(segment.uuid, host.uuid), HostInUseError);
    assert.equal(await store.setNotificationStatus(uuid, 'running', { onlyFrom: ['error'] }), null);
    const task = { name: 'DisableComputeServiceTask', state: 'RUNNING', progress: 0, progressDetails: [] };
    const running = await store.setNotificationStatus(uuid, 'running', { workflowDetails: [task] });
    assert.equal(running?.status, 'running');
    const again = await store.setNotificationStatus(uuid, 'running', {
      workflowDetails: [{ ...task, state: 'SUCCESS', progress: 1 }],
    });
    assert.deepEqual(
      again?.recoveryWorkflowDetails.map((d) => [d.name, d.state]),
      [['DisableComputeServiceTask', 'SUCCESS']],
    );
    await assert.rejects(store.setNotificationStatus(uuid, 'new'), NotificationStatusTransitionError);
    await store.setNotificationStatus(uuid, 'finished');
    await assert.rejects(store.setNotificationStatus(uuid, 'running'), NotificationStatusTransitionError);
    const updated = await writes.updateSegment(segment.uuid, { description: 'x' });
    assert.equal(updated.description, 'x');
    const flagged = await store.setHostFlags(host.uuid, { onMaintenance: true });
    assert.equal(flagged.onMaintenance, true);
  });

  it('records a notification’s vmoves under derived uuids: ids and created_at kept, the same facts written once', async () => {
    const { store: fixed, writes } = newStore();
    let now = new Date('2026-12-07T05:00:00.000Z');
    const store = new MasakariStore({ redis, keyPrefix: prefixes.at(-1)!, now: () => now });
    const segment = await writes.createSegment(segmentFields('moves'));
    await writes.createHost(segment.uuid, hostFields('compute-3'), novaKnows);
    const host = await store.createNotification(
      notification('compute-3', '2026-12-07T05:00:00', stopped),
      180,
    );
    const uuid = host.notificationUuid;
    const moving = (instanceUuid: string, status: VmoveFacts['status']): VmoveFacts => ({
      instanceUuid,
      instanceName: `vm-${instanceUuid.slice(0, 4)}`,
      sourceHost: 'compute-3',
      destHost: status === 'succeeded' ? 'compute-1' : null,
      startTime: '2026-12-07T05:00:01.000000',
      endTime: '2026-12-07T05:00:09.000000',
      type: 'evacuation',
      status,
      message: status === 'failed' ? 'still ERROR' : null,
    });
    const a = '1f4c9a3e-55d2-4f0a-9a34-6a1c1c2f7d10';
    const b = 'b9837317-a5b8-44f4-93b4-45500c562bb8';
    const first = await store.recordVmoves(uuid, [moving(a, 'failed'), moving(b, 'succeeded')]);
    assert.deepEqual(
      first.map((vmove) => [vmove.id, vmove.uuid, vmove.updatedAt]),
      [
        [1, vmoveUuid(uuid, a), null],
        [2, vmoveUuid(uuid, b), null],
      ],
    );
    const version = await redis.get(store.keys.version);
    now = new Date('2026-12-07T05:03:00.000Z');
    await store.recordVmoves(uuid, [moving(b, 'succeeded')]);
    assert.equal(await redis.get(store.keys.version), version, 'the same facts write nothing');
    const retried = await store.recordVmoves(uuid, [moving(a, 'succeeded')]);
    assert.deepEqual(
      [retried[0]?.id, retried[0]?.status, retried[0]?.createdAt, retried[0]?.updatedAt],
      [1, 'succeeded', '2026-12-07T05:00:00.000000', '2026-12-07T05:03:00.000000'],
    );
    assert.deepEqual(
      (await fixed.listVmoves(uuid)).map((vmove) => [vmove.instanceUuid, vmove.status]),
      [
        [a, 'succeeded'],
        [b, 'succeeded'],
      ],
    );
    assert.equal((await store.getVmove(vmoveUuid(uuid, b)))?.destHost, 'compute-1');
    const vm = await store.createNotification(
      {
        type: 'VM',
        hostname: 'compute-3',
        generatedTime: parseDateTime('2026-12-07T05:00:00')!,
        payload: { event: 'LIFECYCLE', instance_uuid: a, vir_domain_event: 'STOPPED_FAILED' },
      },
      180,
    );
    await assert.rejects(
      store.recordVmoves(vm.notificationUuid, [moving(a, 'failed')]),
      NotificationWithoutVmovesError,
    );
    await assert.rejects(store.recordVmoves(a, [moving(a, 'failed')]), NotificationNotFoundError);
  });
});
