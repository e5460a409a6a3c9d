// The API's HTTP answers, one worker in this process over real Redis, with Masakari's noauth2
// strategy (every caller an admin): routing, microversions, content types, fault envelopes, list
// parameters, the notification outbox and queue. Keystone tokens and Nova's host check are proven
// with the real services in masakari-api.real-keystone.test.ts; the vmoves of microversion 1.3, made
// from an incident's events, in packages/masakari-engine/test/vmoves-http.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { masakariNotificationJobId } from '@lifeguard/contracts';
import { bullmqPrefix, createLogger } from '@lifeguard/runtime';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis } from '@lifeguard/testing';
import { Queue } from 'bullmq';
import { MASAKARI_NOTIFICATION_QUEUE, SegmentWrites } from '../src/index.ts';
import type { MasakariApi } from '../src/masakari-api-service.ts';
import { startNoauthApi } from './support/noauth-api.ts';

const redis = testRedis();
const keyPrefix = randomKeyPrefix('masakari-http');
const logger = createLogger({ service: 'masakari-api-test', level: 'silent' });
let api: MasakariApi;
let base: string;

before(async () => {
  ({ api, base } = await startNoauthApi({
    redis,
    keyPrefix,
    logger,
    values: { LIFEGUARD_MASAKARI_OUTBOX_SWEEP_SECONDS: '0.2' },
  }));
});
after(async () => {
  await api.close();
  await deleteKeysWithPrefix(redis, keyPrefix);
  redis.disconnect();
});

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}
async function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {}
  return { status: response.status, headers: response.headers, body: parsed };
}
const V12 = { 'OpenStack-API-Version': 'instance-ha 1.2' };

describe('Masakari v1 API over HTTP (noauth2)', () => {
  it('serves the version documents with the 1.0–1.3 range', async () => {
    const root = await call('GET', '/');
    assert.equal(root.status, 200);
    assert.deepEqual(root.body, {
      versions: [
        {
          id: 'v1.0',
          status: 'CURRENT',
          version: '1.3',
          min_version: '1.0',
          updated: '2016-07-01T11:33:21Z',
          links: [{ rel: 'self', href: `${base}/v1/` }],
        },
      ],
    });
    const v1 = await call('GET', '/v1/');
    assert.equal((v1.body as { version: { version: string } }).version.version, '1.3');
    assert.equal(v1.headers.get('openstack-api-version'), 'masakari 1.0');
  });

  it('answers routing, version, media-type and body problems as Masakari does', async () => {
    const cases: Array<[string, string, unknown, Record<string, string>, number, unknown]> = [
      ['GET', '/v1/nothing', undefined, {}, 404, '404 Not Found\n\nThe resource could not be found.\n\n   '],
      ['PATCH', '/v1/segments', {}, {}, 404, '404 Not Found\n\nThe resource could not be found.\n\n   '],
      [
        'GET',
        '/v1/segments',
        undefined,
        { 'OpenStack-API-Version': 'instance-ha 1.x' },
        400,
        {
          badRequest: {
            code: 400,
            message: 'API Version String 1.x is of invalid format. Must be of format MajorNum.MinorNum.',
          },
        },
      ],
      [
        'GET',
        '/v1/segments',
        undefined,
        { 'OpenStack-API-Version': 'instance-ha 1.4' },
        406,
        {
          masakariFault: {
            code: 406,
            message: 'Version 1.4 is not supported by the API. Minimum is 1.0 and maximum is 1.3.',
          },
        },
      ],
      [
        'POST',
        '/v1/segments',
        '{}',
        { 'Content-Type': 'text/xml' },
        415,
        { badMediaType: { code: 415, message: 'Unsupported Content-Type' } },
      ],
      [
        'POST',
        '/v1/segments',
        '{"segment": ',
        {},
        400,
        { badRequest: { code: 400, message: 'Malformed request body' } },
      ],
      [
        'DELETE',
        '/v1/notifications/7d4c2e1a-5b6f-4a8e-9c0d-1e2f3a4b5c6d',
        undefined,
        {},
        405,
        {
          badMethod: {
            code: 405,
            message: "The request method: 'DELETE' with action: 'delete' is not allowed on this resource",
          },
        },
      ],
      [
        'GET',
        '/v1/segments/not-a-uuid',
        undefined,
        {},
        404,
        { itemNotFound: { code: 404, message: 'No failover segment with id not-a-uuid.' } },
      ],
      [
        'GET',
        '/v1/notifications/7d4c2e1a-5b6f-4a8e-9c0d-1e2f3a4b5c6d',
        undefined,
        {},
        404,
        {
          itemNotFound: {
            code: 404,
            message: 'No notification with id 7d4c2e1a-5b6f-4a8e-9c0d-1e2f3a4b5c6d.',
          },
        },
      ],
      [
        'GET',
        '/v1/segments?limit=-1',
        undefined,
        {},
        400,
        { badRequest: { code: 400, message: 'Invalid input received: limit must be >= 0' } },
      ],
      [
        'GET',
        '/v1/segments?sort_key=colour',
        undefined,
        {},
        400,
        { badRequest: { code: 400, message: 'Sort key supplied is invalid: colour' } },
      ],
      [
        'GET',
        '/v1/segments?sort_dir=up',
        undefined,
        {},
        400,
        {
          badRequest: {
            code: 400,
            message: "Invalid input received: Unknown sort direction, must be 'asc' or 'desc'",
          },
        },
      ],
      [
        'GET',
        '/v1/segments?marker=99999',
        undefined,
        {},
        400,
        { badRequest: { code: 400, message: 'Marker 99999 could not be found.' } },
      ],
      [
        'GET',
        '/v1/notifications?generated-since=soon',
        undefined,
        {},
        400,
        { badRequest: { code: 400, message: 'Invalid generated-since value' } },
      ],
      [
        'POST',
        '/v1/segments',
        'x'.repeat(120_000),
        {},
        413,
        { overLimit: { code: 413, message: 'Request is too large.' } },
      ],
    ];
    for (const [method, path, body, headers, status, expected] of cases) {
      const answer = await call(method, path, body, headers);
      assert.equal(answer.status, status, `${method} ${path}`);
      assert.deepEqual(answer.body, expected, `${method} ${path}`);
    }
    const fault = await call('GET', '/v1/segments/not-a-uuid', undefined, V12);
    assert.equal(fault.headers.get('openstack-api-version'), 'instance-ha 1.2');
    assert.equal(fault.headers.get('content-type'), 'application/json; charset=UTF-8');
  });

  it('creates, lists, sorts, pages, updates and deletes segments with the project id in the URL or not', async () => {
    const created: Array<{ id: number; uuid: string; name: string }> = [];
    for (const [name, method] of [
      ['b-seg', 'auto'],
      ['a-seg', 'reserved_host'],
      ['c-seg', 'auto'],
    ] as const) {
      const answer = await call('POST', '/v1/segments', {
        segment: { name, recovery_method: method, service_type: 'COMPUTE' },
      });
      assert.equal(answer.status, 201);
      const segment = (
        answer.body as { segment: { id: number; uuid: string; name: string; enabled: boolean } }
      ).segment;
      assert.equal(segment.enabled, true);
      created.push(segment);
    }
    const list = async (query: string) =>
      (
        (await call('GET', `/v1/segments${query}`)).body as { segments: Array<{ name: string }> }
      ).segments.map((s) => s.name);
    assert.deepEqual(await list(''), ['c-seg', 'a-seg', 'b-seg'], 'newest first by default');
    assert.deepEqual(await list('?sort_key=name&sort_dir=asc'), ['a-seg', 'b-seg', 'c-seg']);
    assert.deepEqual(await list('?sort_key=name&sort_dir=asc&limit=1'), ['a-seg']);
    assert.deepEqual(await list(`?sort_key=name&sort_dir=asc&marker=${created[1]!.id}`), ['b-seg', 'c-seg']);
    assert.deepEqual(await list('?recovery_method=auto&sort_key=name&sort_dir=asc'), ['b-seg', 'c-seg']);
    assert.deepEqual(await list('?limit=0'), []);
    const conflict = await call('POST', '/v1/segments', {
      segment: { name: 'a-seg', recovery_method: 'auto', service_type: 'X' },
    });
    assert.deepEqual(conflict.body, {
      conflictingRequest: { code: 409, message: 'Failover segment with name a-seg already exists.' },
    });
    const disabled = await call(
      'PUT',
      `/v1/0f1e2d3c/segments/${created[0]!.uuid}`,
      { segment: { enabled: false } },
      V12,
    );
    assert.equal(disabled.status, 400, 'a project id in the URL that is not the caller’s');
    const updated = await call(
      'PUT',
      `/v1/segments/${created[0]!.uuid}`,
      { segment: { enabled: false } },
      V12,
    );
    assert.equal((updated.body as { segment: { enabled: boolean } }).segment.enabled, false);
    assert.equal(updated.headers.get('openstack-api-version'), 'masakari 1.2');
    assert.equal((await call('DELETE', `/v1/segments/${created[2]!.uuid}`)).status, 204);
    assert.equal((await call('GET', `/v1/segments/${created[2]!.uuid}`)).status, 404);
  });

  it('accepts a notification with 202, queues its job once, refuses duplicates with 409 and unknown hosts with 400', async () => {
    const writes = new SegmentWrites(api.store);
    const segment = await writes.createSegment({
      name: 'n-seg',
      description: null,
      serviceType: 'COMPUTE',
      recoveryMethod: 'auto',
      enabled: true,
    });
    const host = await writes.createHost(
      segment.uuid,
      { name: 'compute-n', type: 'COMPUTE', controlAttributes: 'SSH', reserved: false, onMaintenance: false },
      async () => {},
    );
    const notification = {
      type: 'VM',
      hostname: 'compute-n',
      generated_time: '2026-12-07T02:00:00.000001',
      payload: {
        event: 'LIFECYCLE',
        instance_uuid: 'b9837317-a5b8-44f4-93b4-45500c562bb8',
        vir_domain_event: 'STOPPED_FAILED',
      },
    };
    const accepted = await call('POST', '/v1/notifications', { notification });
    assert.equal(accepted.status, 202);
    const body = (accepted.body as { notification: Record<string, unknown> }).notification;
    assert.equal(body.status, 'new');
    assert.equal(body.source_host_uuid, host.uuid);
    assert.equal(body.generated_time, '2026-12-07T02:00:00.000001');
    assert.equal('recovery_workflow_details' in body, false);
    const duplicate = await call('POST', '/v1/notifications', {
      notification: { ...notification, generated_time: '2026-12-07T02:01:00' },
    });
    assert.deepEqual(duplicate.body, {
      conflictingRequest: {
        code: 409,
        message: 'Notification received from host compute-n of type VM is duplicate.',
      },
    });
    const unknown = await call('POST', '/v1/notifications', {
      notification: { ...notification, hostname: 'compute-x' },
    });
    assert.deepEqual(unknown.body, {
      badRequest: { code: 400, message: 'Host with name compute-x could not be found.' },
    });
    const queue = new Queue(MASAKARI_NOTIFICATION_QUEUE, {
      connection: redis,
      prefix: bullmqPrefix(keyPrefix),
    });
    const job = await queue.getJob(masakariNotificationJobId(body.notification_uuid as string));
    assert.deepEqual(job?.data, { notificationUuid: body.notification_uuid });
    assert.equal(await queue.count(), 1);
    await queue.close();
    const shown = await call('GET', `/v1/notifications/${body.notification_uuid}`, undefined, V12);
    assert.deepEqual(
      (shown.body as { notification: { recovery_workflow_details: unknown } }).notification
        .recovery_workflow_details,
      [],
    );
    const inUse = await call('DELETE', `/v1/segments/${segment.uuid}`);
    assert.equal(inUse.status, 409);
    const listed = await call(
      'GET',
      `/v1/notifications?source_host_uuid=${host.uuid}&generated-since=2026-12-07T01:59:00Z`,
    );
    assert.equal((listed.body as { notifications: unknown[] }).notifications.length, 1);
  });
});
