import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
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
