import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { masakariNotificationJobId } from '@lifeguard/contracts';
import { MAX_LIMIT, pageOf, parseListQuery, strictBoolean } from '../src/api/list-query.ts';
import { chooseMicroversion } from '../src/api/microversion.ts';
import { policyRule, route } from '../src/api/router.ts';
import { isAdmin, policyRefusal } from '../src/auth/policy.ts';
import {
  type HostRecord,
  NOTIFICATION_STATUSES,
  type NotificationStatus,
  notificationRefusal,
  notificationTransition,
  parseDateTime,
} from '../src/index.ts';
import { chooseAuthStrategy } from '../src/settings.ts';

describe('notification lifecycle (Masakari engine statuses)', () => {
  const allowed: Record<NotificationStatus, NotificationStatus[]> = {
    new: ['running', 'ignored', 'failed'],
    running: ['finished', 'ignored', 'error', 'failed'],
    error: ['running', 'failed'],
    finished: [],
    failed: [],
    ignored: [],
  };
  for (const from of NOTIFICATION_STATUSES) {
    for (const to of NOTIFICATION_STATUSES) {
      const expected = from === to ? 'unchanged' : allowed[from].includes(to) ? 'change' : 'refused';
      it(`${from} → ${to}: ${expected}`, () => assert.equal(notificationTransition(from, to), expected));
    }
  }
});

describe('notification admission (400 unknown host, 409 maintenance, 409 duplicate, in that order)', () => {
  const host = (onMaintenance: boolean): HostRecord => ({
    id: 1,
    uuid: '0b8e9f4e-0f6a-4b51-9d1e-6c2a8f0d3e11',
    name: 'compute1',
    failoverSegmentId: '7d4c2e1a-5b6f-4a8e-9c0d-1e2f3a4b5c6d',
    type: 'COMPUTE',
    controlAttributes: 'SSH',
    reserved: false,
    onMaintenance,
    createdAt: '2026-12-07T02:00:00.000000',
    updatedAt: null,
    deletedAt: null,
    deleted: false,
  });
  const cases: Array<[string, HostRecord | null, boolean | null, number | null]> = [
    ['no such host', null, null, 400],
    ['no such host, whatever else', null, true, 400],
    ['host on maintenance', host(true), null, 409],
    ['host on maintenance and a duplicate', host(true), true, 409],
    ['a duplicate', host(false), true, 409],
    ['not looked for duplicates yet', host(false), null, null],
    ['accepted', host(false), false, null],
  ];
  for (const [name, found, duplicate, status] of cases) {
    it(name, () => {
      const refusal = notificationRefusal({
        hostname: 'compute1',
        type: 'COMPUTE_HOST',
        host: found,
        duplicate,
      });
      assert.equal(refusal?.status ?? null, status);
    });
  }
  it('words each refusal as Masakari does', () => {
    assert.equal(
      notificationRefusal({ hostname: 'compute1', type: 'VM', host: host(true), duplicate: null })?.message,
      "Notification received from host compute1 of type 'VM' is ignored as the host is already under maintenance.",
    );
  });
});

describe('microversions (OpenStack-API-Version: instance-ha X.Y)', () => {
  const cases: Array<[string | undefined, string]> = [
    [undefined, 'version 1.0'],
    ['instance-ha 1.2', 'version 1.2'],
    ['INSTANCE-HA 1.1', 'version 1.1'],
    ['compute 2.53, instance-ha 1.1', 'version 1.1'],
    ['instance-ha 1.0, instance-ha 1.2', 'version 1.2'],
    ['instance-ha latest', 'version 1.3'],
    ['instance-ha 1.3', 'version 1.3'],
    ['compute 2.1', 'version 1.0'],
    ['instance-ha 1.4', 'unsupported'],
    ['instance-ha 2.0', 'unsupported'],
    ['instance-ha 01.2', 'malformed'],
    ['instance-ha 1.x', 'malformed'],
  ];
  for (const [header, expected] of cases) {
    it(`${header ?? '(none)'} → ${expected}`, () => {
      const choice = chooseMicroversion(header);
      const text =
        choice.kind === 'version' ? `version ${choice.version.major}.${choice.version.minor}` : choice.kind;
      assert.equal(text, expected);
    });
  }
});

describe('routes, with and without the project id', () => {
  const cases: Array<[string, string, string]> = [
    ['GET', '/', 'versions'],
    ['GET', '/v1/', 'version'],
    ['GET', '/v1/segments', 'segments index project=null'],
    ['GET', '/v1/3f2a9c/segments.json', 'segments index project=3f2a9c'],
    ['POST', '/v1/segments/abc/hosts', 'hosts create project=null parent=abc'],
    ['PUT', '/v1/0a1b/segments/s/hosts/h', 'hosts update project=0a1b parent=s id=h'],
    ['DELETE', '/v1/notifications/n', 'not-allowed'],
    ['PUT', '/v1/notifications/n', 'not-allowed'],
    ['PATCH', '/v1/segments/s', 'not-found'],
    ['DELETE', '/v1/segments', 'not-found'],
    ['GET', '/v1/projects-x/segments', 'not-found'],
    ['GET', '/v2/segments', 'not-found'],
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
              ...(found.id && found.resource !== 'segments' ? [`id=${found.id}`] : []),
            ].join(' ')
          : found.kind;
      assert.equal(text, expected);
    });
  }
  it('names the policy rule of each call as Masakari does', () => {
    assert.equal(policyRule('hosts', 'show'), 'os_masakari_api:os-hosts:detail');
    assert.equal(policyRule('notifications', 'create'), 'os_masakari_api:notifications:create');
    assert.equal(
      policyRefusal('os_masakari_api:segments:index'),
      "Policy doesn't allow os_masakari_api:segments:index to be performed.",
    );
    assert.equal(isAdmin(['member', 'Admin']), true);
    assert.equal(isAdmin(['member', 'reader']), false);
  });
});

describe('list parameters (sort, limit, marker, filters)', () => {
  const rows = [
    { id: 1, name: 'b', created_at: '2026-01-01T00:00:01.000000', enabled: true },
    { id: 2, name: 'a', created_at: '2026-01-01T00:00:02.000000', enabled: false },
    { id: 3, name: 'c', created_at: '2026-01-01T00:00:02.000000', enabled: true },
  ];
  const columns = ['id', 'name', 'enabled', 'created_at'];
  const page = (query: string) => {
    const parsed = parseListQuery(new URLSearchParams(query));
    if (!parsed.ok) return parsed.message;
    const result = pageOf(rows, rows, parsed.value, columns);
    return result.ok ? result.value.map((row) => row.id).join(',') : result.message;
  };
  const cases: Array<[string, string]> = [
    ['', '3,2,1'],
    ['sort_key=name&sort_dir=asc', '2,1,3'],
    ['sort_key=enabled&sort_dir=asc', '2,1,3'],
    ['sort_key=name&sort_dir=asc&limit=2', '2,1'],
    ['sort_key=name&sort_dir=asc&marker=1', '3'],
    ['marker=3', '2,1'],
    ['limit=0&sort_key=bogus', ''],
    ['limit=abc', 'Invalid input received: limit must be an integer'],
    ['page_size=-2', 'Invalid input received: page_size must be >= 0'],
    ['marker=42', 'Marker 42 could not be found.'],
    ['sort_key=bogus', 'Sort key supplied is invalid: bogus'],
    [
      'sort_key=name&sort_dir=asc&sort_dir=desc',
      'Invalid input received: Sort direction size exceeds sort key size',
    ],
  ];
  for (const [query, expected] of cases) {
    it(`?${query} → ${expected}`, () => assert.equal(page(query), expected));
  }
  it('caps limit at osapi_max_limit', () => {
    const parsed = parseListQuery(new URLSearchParams('limit=5000'));
    assert.equal(parsed.ok && parsed.value.limit, MAX_LIMIT);
  });
  it('reads boolean filters strictly as oslo does', () => {
    assert.deepEqual(strictBoolean(' YES ', 'reserved'), { ok: true, value: true });
    assert.deepEqual(strictBoolean('f', 'reserved'), { ok: true, value: false });
    assert.equal(strictBoolean('maybe', 'reserved').ok, false);
  });
});

describe('generated_time as Python’s iso8601 reads it, kept in UTC in Masakari’s format', () => {
  const cases: Array<[string, string | null]> = [
    ['2026-12-07T02:00:00.123456', '2026-12-07T02:00:00.123456'],
    ['2026-12-07 02:00', '2026-12-07T02:00:00.000000'],
    ['2026-12-07', '2026-12-07T00:00:00.000000'],
    ['2026-12-07T02:00:00Z', '2026-12-07T02:00:00.000000'],
    ['2026-12-07T02:00:00.5+01:00', '2026-12-07T01:00:00.500000'],
    ['2026-12-07T00:30:00-0100', '2026-12-07T01:30:00.000000'],
    ['20261207T020000', '2026-12-07T02:00:00.000000'],
    ['2026-02-30T00:00:00', null],
    ['2026-12-07T24:00:00', null],
    ['yesterday', null],
  ];
  for (const [text, expected] of cases) {
    it(`${text} → ${expected}`, () => assert.equal(parseDateTime(text)?.timestamp ?? null, expected));
  }
  it('builds the notification job id from the uuid', () => {
    assert.equal(
      masakariNotificationJobId('07a331b8-df15-4582-b121-73ed3541a408'),
      'masakari-notification.07a331b8-df15-4582-b121-73ed3541a408',
    );
  });
});

describe('the auth strategy against the service’s cloud (start-up refuses a mismatch)', () => {
  const cases: Array<['keystone' | 'noauth2' | undefined, string, string]> = [
    ['keystone', 'password', 'keystone'],
    ['keystone', 'v3applicationcredential', 'keystone'],
    ['keystone', 'admin_token', 'refused'],
    ['keystone', 'none', 'refused'],
    ['noauth2', 'admin_token', 'noauth2'],
    ['noauth2', 'none', 'noauth2'],
    ['noauth2', 'password', 'refused'],
    [undefined, 'password', 'keystone'],
    [undefined, 'v3applicationcredential', 'keystone'],
    [undefined, 'admin_token', 'noauth2'],
    [undefined, 'none', 'noauth2'],
  ];
  for (const [asked, authType, expected] of cases) {
    it(`${asked ?? '(unset)'} with auth_type ${authType}: ${expected}`, () => {
      const chosen = chooseAuthStrategy(asked, authType);
      assert.equal('strategy' in chosen ? chosen.strategy : 'refused', expected);
    });
  }
});
