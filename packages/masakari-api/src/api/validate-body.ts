/**
 * Validates request bodies against Masakari's schemas and words the first error as Masakari does:
 * `Invalid input for field/attribute <key>. Value: <value>. <jsonschema message>`, the bare message
 * for an error at the top, and InvalidName's text for a bad name.
 */
import { parseDateTime } from '../timestamps.ts';
import {
  type Format,
  type FormatCheck,
  type Schema,
  type SchemaError,
  validateSchema,
} from './json-schema.ts';
import { pythonStr } from './python-repr.ts';
import { INVALID_NAME_MESSAGE, VALID_NAME } from './request-schemas.ts';

/** oslo_utils.uuidutils.is_uuid_like: 32 hex digits once `urn:`, `uuid:`, braces and hyphens are dropped. */
export function isUuidLike(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const bare = value.toLowerCase().replace('urn:', '').replace('uuid:', '').replace(/[{}-]/g, '');
  return /^[0-9a-f]{32}$/.test(bare);
}

export const FORMATS: Readonly<Record<Format, FormatCheck>> = {
  name: (value) => typeof value === 'string' && VALID_NAME.test(value),
  'date-time': (value) => typeof value === 'string' && parseDateTime(value) !== null,
  uuid: isUuidLike,
};

/** Masakari's message for a schema error. */
export function validationMessage(error: SchemaError): string {
  if (error.invalidName) return INVALID_NAME_MESSAGE;
  const last = error.path.at(-1);
  if (last !== undefined)
    return `Invalid input for field/attribute ${last}. Value: ${pythonStr(error.instance)}. ${error.message}`;
  return error.message;
}

/** Masakari's message for the first error of `body` against `schema`, or null when it is valid. */
export function checkBody(schema: Schema, body: unknown): string | null {
  const error = validateSchema(schema, body, [], FORMATS);
  return error === null ? null : validationMessage(error);
}

/** A uuid-like id in its canonical form (lowercase, hyphenated), or the text as it is otherwise. */
export function canonicalId(value: string): string {
  if (!isUuidLike(value)) return value;
  const hex = value.toLowerCase().replace('urn:', '').replace('uuid:', '').replace(/[{}-]/g, '');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
