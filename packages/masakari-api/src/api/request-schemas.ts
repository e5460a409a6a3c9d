/**
 * Masakari 14's request body schemas (masakari/api/openstack/ha/schemas/*.py and
 * masakari/api/validation/parameter_types.py), with their keywords in Masakari's order so that the
 * first error reported is Masakari's (docs/masakari-api.md#7-request-schemas).
 */
import type { Schema } from './json-schema.ts';
import { PythonTuple } from './python-repr.ts';

// Printable: not a control/format/unassigned/private character (C*), not a line or paragraph
// separator; Masakari's ranges cover the Basic Multilingual Plane only.
const PRINTABLE = String.raw`[^\p{C}\p{Zl}\p{Zp}\u{10000}-\u{10FFFF}]`;
const NOT_PRINTABLE_OR_SPACE = String.raw`[\p{C}\p{Z}\u{10000}-\u{10FFFF}]`;

const name: Schema = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  format: 'name',
};

/** The `name` format: printable characters, no leading or trailing whitespace. */
export const VALID_NAME = new RegExp(
  `^(?!${NOT_PRINTABLE_OR_SPACE})${PRINTABLE}*(?<!${NOT_PRINTABLE_OR_SPACE})$`,
  'u',
);
/** InvalidName's reason. */
export const INVALID_NAME_MESSAGE =
  "An invalid 'name' value was provided. The name must be: printable characters. Can not start or end with whitespace.";

const description: Schema = {
  type: ['string', 'null'],
  minLength: 0,
  // Masakari writes out every printable range of the plane here; its message shows that expression.
  pattern: { source: '^[\\n<printable characters>]*$', test: new RegExp(`^(?:\\n|${PRINTABLE})*$`, 'u') },
};

const hostType: Schema = {
  type: ['string', 'null'],
  minLength: 0,
  maxLength: 255,
  pattern: { source: '^[a-zA-Z0-9]*$', test: /^[a-zA-Z0-9]*$/ },
};

/** The strings (and booleans) Masakari's boolean parameter accepts. */
export const TRUE_STRINGS = ['True', 'TRUE', 'true', '1', 'ON', 'On', 'on', 'YES', 'Yes', 'yes'] as const;
export const FALSE_STRINGS = ['False', 'FALSE', 'false', '0', 'OFF', 'Off', 'off', 'NO', 'No', 'no'] as const;
const boolean: Schema = {
  type: ['boolean', 'string'],
  enum: [true, ...TRUE_STRINGS, false, ...FALSE_STRINGS],
};

const hostname: Schema = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  pattern: { source: '^[a-zA-Z0-9-._]*$', test: /^[a-zA-Z0-9._-]*$/ },
};

const payload: Schema = {
  type: 'object',
  patternProperties: {
    key: {
      source: '^[a-zA-Z0-9-_:. ]{1,255}$',
      test: /^[a-zA-Z0-9_:. -]{1,255}$/,
      schema: { type: 'string', maxLength: 255 },
    },
  },
  additionalProperties: false,
};

const wrapper = (key: string, inner: Schema): Schema => ({
  type: 'object',
  properties: { [key]: inner },
  required: [key],
  additionalProperties: false,
});

const segmentProperties = (withEnabled: boolean): Record<string, Schema> => ({
  name,
  description,
  recovery_method: { type: 'string', enum: ['auto', 'reserved_host', 'auto_priority', 'rh_priority'] },
  service_type: name,
  ...(withEnabled ? { enabled: boolean } : {}),
});

const segmentCreate = (withEnabled: boolean): Schema =>
  wrapper('segment', {
    type: 'object',
    properties: segmentProperties(withEnabled),
    additionalProperties: false,
    required: ['name', 'recovery_method', 'service_type'],
  });

const segmentUpdate = (withEnabled: boolean): Schema =>
  wrapper('segment', {
    type: 'object',
    properties: segmentProperties(withEnabled),
    additionalProperties: false,
    anyOf: [
      'name',
      'description',
      'recovery_method',
      'service_type',
      ...(withEnabled ? ['enabled'] : []),
    ].map((key) => ({ required: [key] })),
  });

/** `POST /segments` at 1.0 and 1.1, and at 1.2 (which adds `enabled`). */
export const SEGMENT_CREATE = { v10: segmentCreate(false), v12: segmentCreate(true) };
/** `PUT /segments/{id}` at 1.0 and 1.1, and at 1.2. */
export const SEGMENT_UPDATE = { v10: segmentUpdate(false), v12: segmentUpdate(true) };

const hostProperties: Record<string, Schema> = {
  name,
  type: hostType,
  control_attributes: description,
  reserved: boolean,
  on_maintenance: boolean,
};

/** `POST /segments/{id}/hosts`. */
export const HOST_CREATE = wrapper('host', {
  type: 'object',
  properties: hostProperties,
  additionalProperties: false,
  required: ['name', 'type', 'control_attributes'],
});

/** `PUT /segments/{id}/hosts/{host_id}`. */
export const HOST_UPDATE = wrapper('host', {
  type: 'object',
  properties: hostProperties,
  additionalProperties: false,
  anyOf: ['name', 'type', 'control_attributes', 'reserved', 'on_maintenance'].map((key) => ({
    required: [key],
  })),
});

/** `POST /notifications`. */
export const NOTIFICATION_CREATE = wrapper('notification', {
  type: 'object',
  properties: {
    type: { type: 'string', enum: new PythonTuple(['COMPUTE_HOST', 'VM', 'PROCESS']) },
    hostname,
    generated_time: { type: 'string', format: 'date-time' },
    payload,
  },
  required: ['type', 'hostname', 'generated_time', 'payload'],
  additionalProperties: false,
});

const events = new PythonTuple(['STARTED', 'STOPPED']);

/** The payload of each notification type, checked after the body (its errors' paths start in it). */
export const PAYLOAD_SCHEMAS: Readonly<Record<'COMPUTE_HOST' | 'VM' | 'PROCESS', Schema>> = {
  COMPUTE_HOST: {
    type: 'object',
    properties: {
      host_status: { enum: new PythonTuple(['NORMAL', 'UNKNOWN']), type: 'string' },
      cluster_status: { enum: new PythonTuple(['ONLINE', 'OFFLINE']), type: 'string' },
      event: { enum: events, type: 'string' },
    },
    required: ['event'],
    additionalProperties: false,
  },
  PROCESS: {
    type: 'object',
    properties: {
      process_name: { type: 'string', minLength: 1, maxLength: 4096 },
      event: { enum: events, type: 'string' },
    },
    required: ['process_name', 'event'],
    additionalProperties: false,
  },
  VM: {
    type: 'object',
    properties: {
      instance_uuid: { type: 'string', format: 'uuid' },
      vir_domain_event: { type: 'string', minLength: 1, maxLength: 255 },
      event: { type: 'string', minLength: 1, maxLength: 255 },
    },
    required: ['instance_uuid', 'vir_domain_event', 'event'],
    additionalProperties: false,
  },
};
