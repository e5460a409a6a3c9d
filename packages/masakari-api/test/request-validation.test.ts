// Masakari's request validation: messages written as Python writes values, tables of Masakari's
// answers, and every message compared with Debian's python3-masakari validator and schemas
// (test/support/masakari_validate.py) on the same bodies, word for word.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import type { Schema } from '../src/api/json-schema.ts';
import { PythonTuple, pythonRepr } from '../src/api/python-repr.ts';
import {
  HOST_CREATE,
  HOST_UPDATE,
  NOTIFICATION_CREATE,
  PAYLOAD_SCHEMAS,
  SEGMENT_CREATE,
  SEGMENT_UPDATE,
} from '../src/api/request-schemas.ts';
import { canonicalId, checkBody, isUuidLike } from '../src/api/validate-body.ts';

describe('Python repr of JSON values (as Masakari messages show them)', () => {
  const cases: Array<[unknown, string]> = [
    ['x', "'x'"],
    ["it's", `"it's"`],
    ['a\nb', "'a\\nb'"],
    [1, '1'],
    [true, 'True'],
    [null, 'None'],
    [{ name: 'a', n: [1, false] }, "{'name': 'a', 'n': [1, False]}"],
    [new PythonTuple(['VM']), "('VM',)"],
    [new PythonTuple(['STARTED', 'STOPPED']), "('STARTED', 'STOPPED')"],
  ];
  for (const [value, expected] of cases) {
    it(`${JSON.stringify(value)} → ${expected}`, () => assert.equal(pythonRepr(value), expected));
  }
});

describe("Masakari's request validation messages (first error, as jsonschema reports it)", () => {
  const segment = (fields: Record<string, unknown>) => ({ segment: fields });
  const cases: Array<[string, Parameters<typeof checkBody>[0], unknown, string | null]> = [
    [
      'a valid segment',
      SEGMENT_CREATE.v10,
      segment({ name: 's', recovery_method: 'auto', service_type: 'COMPUTE' }),
      null,
    ],
    ['no body', SEGMENT_CREATE.v10, null, "None is not of type 'object'"],
    ['no wrapper', SEGMENT_CREATE.v10, { name: 's' }, "'segment' is a required property"],
    [
      'a missing required property',
      SEGMENT_CREATE.v10,
      segment({ name: 's', service_type: 'C' }),
      "Invalid input for field/attribute segment. Value: {'name': 's', 'service_type': 'C'}. 'recovery_method' is a required property",
    ],
    [
      'an unknown recovery method',
      SEGMENT_CREATE.v10,
      segment({ name: 's', recovery_method: 'magic', service_type: 'C' }),
      "Invalid input for field/attribute recovery_method. Value: magic. 'magic' is not one of ['auto', 'reserved_host', 'auto_priority', 'rh_priority']",
    ],
    [
      '`enabled` before 1.2',
      SEGMENT_CREATE.v10,
      segment({ name: 's', recovery_method: 'auto', service_type: 'C', enabled: false }),
      "Invalid input for field/attribute segment. Value: {'name': 's', 'recovery_method': 'auto', 'service_type': 'C', 'enabled': False}. Additional properties are not allowed ('enabled' was unexpected)",
    ],
    [
      '`enabled` at 1.2',
      SEGMENT_CREATE.v12,
      segment({ name: 's', recovery_method: 'auto', service_type: 'C', enabled: 'no' }),
      null,
    ],
    [
      'a name with a leading space',
      SEGMENT_CREATE.v10,
      segment({ name: ' s', recovery_method: 'auto', service_type: 'C' }),
      "An invalid 'name' value was provided. The name must be: printable characters. Can not start or end with whitespace.",
    ],
    [
      'a name of the wrong type',
      SEGMENT_CREATE.v10,
      segment({ name: 5, recovery_method: 'auto', service_type: 'C' }),
      "Invalid input for field/attribute name. Value: 5. 5 is not of type 'string'",
    ],
    [
      'an empty update',
      SEGMENT_UPDATE.v10,
      segment({}),
      'Invalid input for field/attribute segment. Value: {}. {} is not valid under any of the given schemas',
    ],
    [
      'a host type with an underscore',
      HOST_CREATE,
      { host: { name: 'h', type: 'COMPUTE_HOST', control_attributes: 'SSH' } },
      "Invalid input for field/attribute type. Value: COMPUTE_HOST. 'COMPUTE_HOST' does not match '^[a-zA-Z0-9]*$'",
    ],
    [
      'host booleans as strings',
      HOST_CREATE,
      { host: { name: 'h', type: 'C', control_attributes: 'SSH', reserved: 'True' } },
      null,
    ],
    [
      'a host boolean that is no boolean',
      HOST_UPDATE,
      { host: { reserved: 'maybe' } },
      "Invalid input for field/attribute reserved. Value: maybe. 'maybe' is not one of [True, 'True', 'TRUE', 'true', '1', 'ON', 'On', 'on', 'YES', 'Yes', 'yes', False, 'False', 'FALSE', 'false', '0', 'OFF', 'Off', 'off', 'NO', 'No', 'no']",
    ],
    [
      'an unknown notification type',
      NOTIFICATION_CREATE,
      { notification: { type: 'DISK', hostname: 'h', generated_time: '2026-01-01T00:00:00', payload: {} } },
      "Invalid input for field/attribute type. Value: DISK. 'DISK' is not one of ('COMPUTE_HOST', 'VM', 'PROCESS')",
    ],
    [
      'a generated_time that is no date-time',
      NOTIFICATION_CREATE,
      { notification: { type: 'VM', hostname: 'h', generated_time: 'yesterday', payload: {} } },
      "Invalid input for field/attribute generated_time. Value: yesterday. 'yesterday' is not a 'date-time'",
    ],
    [
      'a payload key outside the pattern',
      NOTIFICATION_CREATE,
      {
        notification: {
          type: 'VM',
          hostname: 'h',
          generated_time: '2026-01-01 00:00',
          payload: { 'a/b': 'x' },
        },
      },
      "Invalid input for field/attribute payload. Value: {'a/b': 'x'}. 'a/b' does not match any of the regexes: '^[a-zA-Z0-9-_:. ]{1,255}$'",
    ],
    [
      'a lowercase process event',
      PAYLOAD_SCHEMAS.PROCESS,
      { process_name: 'nova-compute', event: 'stopped' },
      "Invalid input for field/attribute event. Value: stopped. 'stopped' is not one of ('STARTED', 'STOPPED')",
    ],
    [
      'a VM payload',
      PAYLOAD_SCHEMAS.VM,
      {
        instance_uuid: 'B9837317A5B844F493B445500C562BB8',
        vir_domain_event: 'STOPPED_FAILED',
        event: 'LIFECYCLE',
      },
      null,
    ],
    [
      'a VM payload without its instance',
      PAYLOAD_SCHEMAS.VM,
      { vir_domain_event: 'STOPPED_FAILED', event: 'LIFECYCLE' },
      "'instance_uuid' is a required property",
    ],
  ];
  for (const [name, schema, body, expected] of cases) {
    it(name, () => assert.equal(checkBody(schema, body), expected));
  }

  it('reads ids as oslo does (any case, with or without hyphens) and canonicalises them', () => {
    assert.equal(isUuidLike('not-a-uuid'), false);
    assert.equal(canonicalId('B9837317A5B844F493B445500C562BB8'), 'b9837317-a5b8-44f4-93b4-45500c562bb8');
    assert.equal(canonicalId('segment-a'), 'segment-a');
  });
});

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
  // Keys every JavaScript object inherits are still unexpected properties when a body has them.
  ['segment-create-1.0', JSON.parse(`{"segment": ${JSON.stringify({ ...segment, toString: 1 })}}`)],
  ['host-create', JSON.parse(`{"host": ${JSON.stringify({ ...host, constructor: 'x' })}}`)],
  ['segment-create-1.0', JSON.parse(`{"segment": ${JSON.stringify(segment)}, "__proto__": {"a": 1}}`)],
  ['segment-update-1.0', JSON.parse('{"segment": {"hasOwnProperty": "x"}}')],
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
