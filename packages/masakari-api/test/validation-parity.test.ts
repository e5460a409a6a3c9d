// lifeguard's request validation against Masakari's own: the same bodies go through Debian's
// python3-masakari validator and schemas (test/support/masakari_validate.py), and every message
// must be the same, word for word.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import type { Schema } from '../src/api/json-schema.ts';
import {
  HOST_CREATE,
  HOST_UPDATE,
  NOTIFICATION_CREATE,
  PAYLOAD_SCHEMAS,
  SEGMENT_CREATE,
  SEGMENT_UPDATE,
} from '../src/api/request-schemas.ts';
import { checkBody } from '../src/api/validate-body.ts';

const SCHEMAS: Record<string, Schema> = {
  'segment-create-1.0': SEGMENT_CREATE.v10,
  'segment-create-1.2': SEGMENT_CREATE.v12,
  'segment-update-1.0': SEGMENT_UPDATE.v10,
  'segment-update-1.2': SEGMENT_UPDATE.v12,
  'host-create': HOST_CREATE,
  'host-update': HOST_UPDATE,
  'notification-create': NOTIFICATION_CREATE,
  'payload-COMPUTE_HOST': PAYLOAD_SCHEMAS.COMPUTE_HOST,
  'payload-PROCESS': PAYLOAD_SCHEMAS.PROCESS,
  'payload-VM': PAYLOAD_SCHEMAS.VM,
};

const segment = { name: 'seg', recovery_method: 'auto', service_type: 'COMPUTE' };
const host = { name: 'compute-1', type: 'COMPUTE', control_attributes: 'SSH' };
const notification = {
  type: 'COMPUTE_HOST',
  hostname: 'compute-1',
  generated_time: '2026-12-07T02:00:00.123456',
  payload: { event: 'STOPPED' },
};

const CASES: Array<[string, unknown]> = [
  ['segment-create-1.0', { segment }],
  ['segment-create-1.0', null],
  ['segment-create-1.0', []],
  ['segment-create-1.0', {}],
  ['segment-create-1.0', { segment, extra: 1 }],
  ['segment-create-1.0', { segment: { ...segment, enabled: true } }],
  ['segment-create-1.2', { segment: { ...segment, enabled: 'Off' } }],
  ['segment-create-1.2', { segment: { ...segment, enabled: 'nope' } }],
  ['segment-create-1.0', { segment: { name: 'seg' } }],
  ['segment-create-1.0', { segment: { ...segment, name: '' } }],
  ['segment-create-1.0', { segment: { ...segment, name: 'x'.repeat(256) } }],
  ['segment-create-1.0', { segment: { ...segment, name: 'trailing ' } }],
  ['segment-create-1.0', { segment: { ...segment, name: 'tab\tinside' } }],
  ['segment-create-1.0', { segment: { ...segment, name: 42 } }],
  ['segment-create-1.0', { segment: { ...segment, recovery_method: 'AUTO' } }],
  ['segment-create-1.0', { segment: { ...segment, description: null } }],
  ['segment-create-1.0', { segment: { ...segment, description: 7 } }],
  ['segment-create-1.0', { segment: { ...segment, description: 'two\nlines' } }],
  ['segment-create-1.0', { segment: { ...segment, service_type: ' COMPUTE' } }],
  ['segment-create-1.0', { segment: { ...segment, zz: 1, aa: 2 } }],
  ['segment-update-1.0', { segment: {} }],
  ['segment-update-1.0', { segment: { description: 'it\'s "quoted"' } }],
  ['segment-update-1.2', { segment: { enabled: false } }],
  ['segment-update-1.0', { segment: { enabled: false } }],
  ['host-create', { host }],
  ['host-create', { host: { ...host, type: 'COMPUTE_HOST' } }],
  ['host-create', { host: { ...host, type: null, reserved: 'yes', on_maintenance: 0 } }],
  ['host-create', { host: { name: 'compute-1', type: 'COMPUTE' } }],
  ['host-create', { host: { ...host, failover_segment_id: 'x' } }],
  ['host-update', { host: {} }],
  ['host-update', { host: { on_maintenance: 'maybe' } }],
  ['host-update', { host: { reserved: [true] } }],
  ['notification-create', { notification }],
  ['notification-create', { notification: { ...notification, type: 'vm' } }],
  ['notification-create', { notification: { ...notification, hostname: 'bad host' } }],
  ['notification-create', { notification: { ...notification, hostname: '' } }],
  ['notification-create', { notification: { ...notification, generated_time: '2026-13-01T00:00:00' } }],
  ['notification-create', { notification: { ...notification, generated_time: '2026-12-07 02:00' } }],
  ['notification-create', { notification: { ...notification, generated_time: '2026-12-07T02:00:00+01:00' } }],
  ['notification-create', { notification: { ...notification, generated_time: 1733536800 } }],
  ['notification-create', { notification: { ...notification, payload: 'STOPPED' } }],
  ['notification-create', { notification: { ...notification, payload: { event: 1 } } }],
  ['notification-create', { notification: { ...notification, payload: { 'bad/key': 'x', 'also!': 'y' } } }],
  ['notification-create', { notification: { type: 'VM' } }],
  ['payload-COMPUTE_HOST', { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' }],
  ['payload-COMPUTE_HOST', { event: 'stopped' }],
  ['payload-COMPUTE_HOST', { host_status: 'NORMAL' }],
  ['payload-COMPUTE_HOST', { event: 'STOPPED', extra: 'x' }],
  ['payload-PROCESS', { process_name: 'nova-compute', event: 'STOPPED' }],
  ['payload-PROCESS', { process_name: '', event: 'STOPPED' }],
  [
    'payload-VM',
    {
      instance_uuid: 'b9837317-a5b8-44f4-93b4-45500c562bb8',
      vir_domain_event: 'STOPPED_FAILED',
      event: 'LIFECYCLE',
    },
  ],
  ['payload-VM', { instance_uuid: 'not-a-uuid', vir_domain_event: 'STOPPED_FAILED', event: 'LIFECYCLE' }],
  [
    'payload-VM',
    { instance_uuid: '{B9837317-A5B8-44F4-93B4-45500C562BB8}', vir_domain_event: '', event: 'LIFECYCLE' },
  ],
];

describe("request validation answers as Masakari 14's own validator", () => {
  const script = new URL('./support/masakari_validate.py', import.meta.url).pathname;
  const input = JSON.stringify(CASES.map(([schema, body]) => ({ schema, body })));
  const expected = JSON.parse(
    execFileSync('/usr/bin/python3', [script], { input, encoding: 'utf8' }),
  ) as Array<string | null>;

  CASES.forEach(([schema, body], index) => {
    it(`${schema} ${JSON.stringify(body)}`, () => {
      assert.equal(checkBody(SCHEMAS[schema]!, body), expected[index]);
    });
  });
});
