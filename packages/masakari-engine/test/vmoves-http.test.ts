// The vmoves of a COMPUTE_HOST notification (Masakari's microversion 1.3) over HTTP, on real Redis:
// an incident holding evacuated instances, as the fencing and evacuation workers leave it (its
// state, and the per-instance events in its timeline), the engine's host-failure handler following
// it, and the Masakari API (noauth2) answering `GET /v1/notifications/{id}/vmoves[/{vmove_id}]`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEvent, type EventData, type LifeguardEvent } from '@lifeguard/contracts';
import { IncidentStore, MonitorReportStore, PlacementDirectiveStore } from '@lifeguard/instance-ha';
import { type NotificationRecord, SegmentWrites, vmoveUuid } from '@lifeguard/masakari-api';
import { createLogger, EventJournal } from '@lifeguard/runtime';
import {
  deleteKeysWithPrefix,
  hostDownEvidence,
  randomKeyPrefix,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import type { MasakariApi } from '../../masakari-api/src/masakari-api-service.ts';
import { startNoauthApi } from '../../masakari-api/test/support/noauth-api.ts';
import { HostFailureHandler } from '../src/index.ts';

const redis = testRedis();
const keyPrefix = randomKeyPrefix('masakari-vmoves');
const logger = createLogger({ service: 'masakari-vmoves-test', level: 'silent' });
const SOURCE = { service: 'evacuation-worker', instance: 'test:1' };
const A = '1f4c9a3e-55d2-4f0a-9a34-6a1c1c2f7d10';
const B = 'b9837317-a5b8-44f4-93b4-45500c562bb8';
const C = '5e0d6b8a-7c41-4b9e-8f2d-3a6c9b1e0f47';
const V13 = { 'OpenStack-API-Version': 'instance-ha 1.3' };
let api: MasakariApi;
let base: string;
const incidents = new IncidentStore(redis, keyPrefix);
const journal = new EventJournal(redis, keyPrefix);
const reports = new MonitorReportStore(redis, keyPrefix);
const directives = new PlacementDirectiveStore(redis, keyPrefix);

before(async () => {
  ({ api, base } = await startNoauthApi({ redis, keyPrefix, logger }));
});
after(async () => {
  await api.close();
  await deleteKeysWithPrefix(redis, keyPrefix);
  redis.disconnect();
});

async function call(path: string, headers: Record<string, string> = {}, method = 'GET', body?: unknown) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? null : JSON.parse(text) };
}

/** Accepts a notification over HTTP, as a Masakari monitor sends it. */
async function notify(type: 'COMPUTE_HOST' | 'VM', payload: Record<string, string>): Promise<string> {
  const notification = { type, hostname: 'compute-3', generated_time: new Date().toISOString(), payload };
  const answer = await call('/v1/notifications', {}, 'POST', { notification });
  assert.equal(answer.status, 202, JSON.stringify(answer.body));
  return answer.body.notification.notification_uuid;
}

const instance = (instanceId: string, instanceName: string, incidentId: string) => ({
  host: 'compute-3',
  incidentId,
  instanceId,
  instanceName,
});
const evacuated = (id: string, name: string, incidentId: string, targetHost: string): LifeguardEvent =>
  createEvent(
    'instance.evacuated',
    {
      ...instance(id, name, incidentId),
      targetHost,
      migrationStatus: 'done',
      attempts: 1,
      novaRequestId: null,
      durationSeconds: 3,
    } satisfies EventData<'instance.evacuated'>,
    SOURCE,
  );

/** An incident of compute-3, fenced and evacuating, admitted on the notification's report. */
async function admittedIncident(notificationUuid: string): Promise<string> {
  const { incident } = await incidents.openIncident({
    host: 'compute-3',
    serviceId: 'service-3',
    fencingToken: 1,
    kdumpFenced: false,
    evidence: hostDownEvidence('service-3'),
  });
  const now = new Date().toISOString();
  await incidents.recordFence(incident.id, { proof: 'noop', method: 'noop', at: now, by: null, note: null });
  await incidents.setState(incident.id, 'evacuating');
  const report = {
    host: 'compute-3',
    source: 'masakari' as const,
    reference: notificationUuid,
    reportedAt: now,
  };
  await reports.record(report);
  await reports.judge(report, {
    verdict: 'admitted',
    host: 'compute-3',
    incidentId: incident.id,
    reason: 'admitted',
    at: now,
  });
  await journal.record(
    createEvent(
      'host.evacuation.started',
      { host: 'compute-3', incidentId: incident.id, mode: 'smart', instanceCount: 2, reservedHost: null },
      SOURCE,
    ),
  );
  return incident.id;
}

describe('vmoves over HTTP, from an incident that evacuated a host', { timeout: 60_000 }, () => {
  let hostNotification: string;
  let vmNotification: string;
  let handler: HostFailureHandler;
  let context: Parameters<HostFailureHandler['run']>[0];

  before(async () => {
    const writes = new SegmentWrites(api.store);
    const segment = await writes.createSegment({
      name: 'vmoves',
      description: null,
      serviceType: 'COMPUTE',
      recoveryMethod: 'auto',
      enabled: true,
    });
    const host = await writes.createHost(
      segment.uuid,
      { name: 'compute-3', type: 'COMPUTE', controlAttributes: 'SSH', reserved: false, onMaintenance: false },
      async () => undefined,
    );
    hostNotification = await notify('COMPUTE_HOST', { event: 'STOPPED', host_status: 'NORMAL' });
    vmNotification = await notify('VM', {
      event: 'LIFECYCLE',
      instance_uuid: A,
      vir_domain_event: 'STOPPED_FAILED',
    });
    handler = new HostFailureHandler({
      reports,
      incidents,
      journal,
      directives,
      store: api.store,
      logger,
      verdictTimeoutMilliseconds: 5000,
      recoveryTimeoutMilliseconds: 30_000,
      watchMilliseconds: 50,
    });
    context = {
      notification: (await api.store.getNotification(hostNotification)) as NotificationRecord,
      host,
      segment,
      progress: async () => undefined,
    };
  });

  it('lists each evacuated instance while the recovery runs and after it, with the same uuid and id on every read', async () => {
    const incidentId = await admittedIncident(hostNotification);
    const running = handler.run(context);
    await journal.record(evacuated(A, 'web-1', incidentId, 'compute-1'));
    const path = `/v1/notifications/${hostNotification}/vmoves`;
    const listed = async () => (await call(path, V13)).body.vmoves as Array<Record<string, unknown>>;
    const first = await waitFor('the first vmove', async () =>
      (await listed()).length === 1 ? listed() : false,
    );
    await journal.record(evacuated(B, 'web-2', incidentId, 'compute-2'));
    await journal.record(
      createEvent(
        'instance.evacuation.skipped',
        { ...instance(C, 'octavia-1', incidentId), reason: 'tag', attempts: 0, novaRequestId: null },
        SOURCE,
      ),
    );
    await incidents.setState(incidentId, 'evacuated');
    const result = await running;
    assert.equal(result.status, 'finished', result.reason);
    const answer = await call(`${path}?sort_key=instance_name&sort_dir=asc`, V13);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('openstack-api-version'), 'masakari 1.3');
    const vmoves = answer.body.vmoves as Array<Record<string, unknown>>;
    assert.deepEqual(
      vmoves.map((vmove) => [
        vmove.uuid,
        vmove.notification_uuid,
        vmove.instance_uuid,
        vmove.instance_name,
        vmove.source_host,
        vmove.dest_host,
        vmove.type,
        vmove.status,
        vmove.message,
      ]),
      [
        [
          vmoveUuid(hostNotification, A),
          hostNotification,
          A,
          'web-1',
          'compute-3',
          'compute-1',
          'evacuation',
          'succeeded',
          null,
        ],
        [
          vmoveUuid(hostNotification, B),
          hostNotification,
          B,
          'web-2',
          'compute-3',
          'compute-2',
          'evacuation',
          'succeeded',
          null,
        ],
      ],
    );
    assert.deepEqual([vmoves[0]?.id, vmoves[0]?.created_at], [first[0]?.id, first[0]?.created_at]);
    assert.match(String(vmoves[0]?.start_time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/);
    // A redelivered job follows the same incident and writes nothing new.
    assert.equal((await handler.run(context)).status, 'finished');
    assert.deepEqual((await call(`${path}?sort_key=instance_name&sort_dir=asc`, V13)).body.vmoves, vmoves);
  });

  it('pages, filters and shows vmoves as Masakari does, and answers its errors', async () => {
    const path = `/v1/notifications/${hostNotification}/vmoves`;
    const names = async (query: string) =>
      ((await call(`${path}${query}`, V13)).body.vmoves as Array<{ instance_name: string }>).map(
        (vmove) => vmove.instance_name,
      );
    const all = (await call(`${path}?sort_key=id&sort_dir=asc`, V13)).body.vmoves as Array<{ id: number }>;
    assert.deepEqual(await names('?sort_key=id&sort_dir=asc&limit=1'), ['web-1']);
    assert.deepEqual(await names(`?sort_key=id&sort_dir=asc&marker=${all[0]!.id}`), ['web-2']);
    assert.deepEqual(await names('?status=succeeded&type=evacuation&sort_key=id&sort_dir=asc'), [
      'web-1',
      'web-2',
    ]);
    assert.deepEqual(await names('?status=failed'), []);
    const uuid = vmoveUuid(hostNotification, B);
    const shown = await call(`/v1/0a1b2c/notifications/${hostNotification}/vmoves/${uuid}`, V13);
    assert.equal(shown.status, 400, 'a project id in the URL that is not the caller’s');
    const show = await call(`${path}/${uuid.toUpperCase()}`, V13);
    assert.deepEqual(
      [show.status, show.body.vmove.uuid, show.body.vmove.dest_host],
      [200, uuid, 'compute-2'],
    );
    const unknown = vmoveUuid(hostNotification, C);
    const missingNotification = vmoveUuid(hostNotification, hostNotification);
    const cases: Array<[string, Record<string, string>, number, unknown]> = [
      [path, {}, 404, { itemNotFound: { code: 404, message: 'The resource could not be found.' } }],
      [
        path,
        { 'OpenStack-API-Version': 'instance-ha 1.2' },
        404,
        { itemNotFound: { code: 404, message: 'The resource could not be found.' } },
      ],
      [
        `${path}/${uuid}`,
        { 'OpenStack-API-Version': 'instance-ha 1.2' },
        404,
        { itemNotFound: { code: 404, message: 'The resource could not be found.' } },
      ],
      [
        `${path}/${unknown}`,
        V13,
        404,
        { itemNotFound: { code: 404, message: `No vm move with id ${unknown}.` } },
      ],
      [
        `${path}/not-a-uuid`,
        V13,
        404,
        { itemNotFound: { code: 404, message: 'No vm move with id not-a-uuid.' } },
      ],
      [
        `/v1/notifications/${vmNotification}/vmoves/${uuid}`,
        V13,
        400,
        { badRequest: { code: 400, message: `This notification ${vmNotification} without vm moves.` } },
      ],
      [
        `/v1/notifications/${vmNotification}/vmoves`,
        V13,
        400,
        { badRequest: { code: 400, message: `This notification ${vmNotification} without vm moves.` } },
      ],
      [
        `/v1/notifications/${missingNotification}/vmoves`,
        V13,
        404,
        { itemNotFound: { code: 404, message: `No notification with id ${missingNotification}.` } },
      ],
      [
        `/v1/notifications/${missingNotification}/vmoves/${uuid}`,
        V13,
        404,
        { itemNotFound: { code: 404, message: `No notification with id ${missingNotification}.` } },
      ],
      [
        `${path}?sort_key=colour`,
        V13,
        400,
        { badRequest: { code: 400, message: 'Sort key supplied is invalid: colour' } },
      ],
      [
        `${path}?marker=99999`,
        V13,
        400,
        { badRequest: { code: 400, message: 'Marker 99999 could not be found.' } },
      ],
      [
        `${path}?limit=x`,
        V13,
        400,
        { badRequest: { code: 400, message: 'Invalid input received: limit must be an integer' } },
      ],
    ];
    for (const [url, headers, status, body] of cases) {
      const answer = await call(url, headers);
      assert.deepEqual([answer.status, answer.body], [status, body], url);
    }
    const other = await notify('COMPUTE_HOST', {
      event: 'STOPPED',
      host_status: 'NORMAL',
      cluster_status: 'OFFLINE',
    });
    const elsewhere = await call(`/v1/notifications/${other}/vmoves/${uuid}`, V13);
    assert.deepEqual(elsewhere.body, { itemNotFound: { code: 404, message: `No vm move with id ${uuid}.` } });
    assert.deepEqual((await call(`/v1/notifications/${other}/vmoves`, V13)).body, { vmoves: [] });
    const notAllowed = await call(path, V13, 'POST', {});
    assert.deepEqual(notAllowed.body, {
      badMethod: {
        code: 405,
        message: "The request method: 'POST' with action: 'create' is not allowed on this resource",
      },
    });
  });
});
