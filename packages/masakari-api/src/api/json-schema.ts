/**
 * The part of JSON Schema (Draft 4) Masakari's request schemas use, checked as Python's jsonschema
 * checks them: keywords in the schema's own order, the first error wins, and each error's message is
 * jsonschema's, with values written as Python writes them (docs/masakari-api.md#7-request-schemas).
 */
import { PythonTuple, pythonRepr } from './python-repr.ts';

export type JsonType = 'object' | 'string' | 'boolean' | 'null' | 'array' | 'number' | 'integer';
export type Format = 'name' | 'date-time' | 'uuid';

export interface Schema {
  type?: JsonType | JsonType[];
  enum?: ReadonlyArray<unknown> | PythonTuple;
  minLength?: number;
  maxLength?: number;
  /** The pattern as Masakari writes it (shown in the message) and the expression that tests it. */
  pattern?: { source: string; test: RegExp };
  format?: Format;
  properties?: Readonly<Record<string, Schema>>;
  patternProperties?: Readonly<Record<string, { source: string; test: RegExp; schema: Schema }>>;
  additionalProperties?: false;
  required?: ReadonlyArray<string>;
  anyOf?: ReadonlyArray<Schema>;
}

/** The first error found: where (a path of keys), the value there and jsonschema's message. */
export interface SchemaError {
  path: string[];
  instance: unknown;
  message: string;
  /** Set when a `name` format check failed: Masakari then answers with its InvalidName message. */
  invalidName?: true;
}

export type FormatCheck = (value: unknown) => boolean;

function typeOf(value: unknown): JsonType[] {
  if (value === null) return ['null'];
  if (Array.isArray(value)) return ['array'];
  if (typeof value === 'number') return Number.isInteger(value) ? ['number', 'integer'] : ['number'];
  return [typeof value as JsonType];
}

function enumIncludes(options: ReadonlyArray<unknown>, value: unknown): boolean {
  return options.some((option) => option === value);
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Python counts a string's length in code points. */
const length = (text: string): number => [...text].length;

type Check = (
  schema: Schema,
  value: unknown,
  path: string[],
  formats: Readonly<Record<Format, FormatCheck>>,
) => SchemaError | null;

const error = (path: string[], instance: unknown, message: string): SchemaError => ({
  path,
  instance,
  message,
});

const CHECKS: Readonly<Record<keyof Schema, Check>> = {
  type: (schema, value, path) => {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type!];
    if (typeOf(value).some((type) => types.includes(type))) return null;
    return error(
      path,
      value,
      `${pythonRepr(value)} is not of type ${types.map((type) => pythonRepr(type)).join(', ')}`,
    );
  },
  enum: (schema, value, path) => {
    const options = schema.enum instanceof PythonTuple ? schema.enum.items : schema.enum!;
    return enumIncludes(options, value)
      ? null
      : error(path, value, `${pythonRepr(value)} is not one of ${pythonRepr(schema.enum)}`);
  },
  minLength: (schema, value, path) =>
    typeof value === 'string' && length(value) < schema.minLength!
      ? error(path, value, `${pythonRepr(value)} is too short`)
      : null,
  maxLength: (schema, value, path) =>
    typeof value === 'string' && length(value) > schema.maxLength!
      ? error(path, value, `${pythonRepr(value)} is too long`)
      : null,
  pattern: (schema, value, path) =>
    typeof value === 'string' && !schema.pattern!.test.test(value)
      ? error(path, value, `${pythonRepr(value)} does not match ${pythonRepr(schema.pattern!.source)}`)
      : null,
  format: (schema, value, path, formats) => {
    if (formats[schema.format!](value)) return null;
    const failure = error(path, value, `${pythonRepr(value)} is not a ${pythonRepr(schema.format)}`);
    return schema.format === 'name' ? { ...failure, invalidName: true } : failure;
  },
  properties: (schema, value, path, formats) => {
    if (!isObject(value)) return null;
    for (const [key, property] of Object.entries(schema.properties!)) {
      if (!Object.hasOwn(value, key)) continue;
      const found = validateSchema(property, value[key], [...path, key], formats);
      if (found !== null) return found;
    }
    return null;
  },
  patternProperties: (schema, value, path, formats) => {
    if (!isObject(value)) return null;
    for (const pattern of Object.values(schema.patternProperties!)) {
      for (const [key, item] of Object.entries(value)) {
        if (!pattern.test.test(key)) continue;
        const found = validateSchema(pattern.schema, item, [...path, key], formats);
        if (found !== null) return found;
      }
    }
    return null;
  },
  additionalProperties: (schema, value, path) => {
    if (!isObject(value)) return null;
    const patterns = Object.values(schema.patternProperties ?? {});
    const extras = Object.keys(value)
      .filter(
        (key) =>
          !Object.hasOwn(schema.properties ?? {}, key) && !patterns.some((pattern) => pattern.test.test(key)),
      )
      .sort();
    if (extras.length === 0) return null;
    const joined = extras.map((extra) => pythonRepr(extra)).join(', ');
    if (patterns.length > 0) {
      const sources = patterns
        .map((pattern) => pythonRepr(pattern.source))
        .sort()
        .join(', ');
      return error(
        path,
        value,
        `${joined} ${extras.length === 1 ? 'does' : 'do'} not match any of the regexes: ${sources}`,
      );
    }
    return error(
      path,
      value,
      `Additional properties are not allowed (${joined} ${extras.length === 1 ? 'was' : 'were'} unexpected)`,
    );
  },
  required: (schema, value, path) => {
    if (!isObject(value)) return null;
    const missing = schema.required!.find((key) => !Object.hasOwn(value, key));
    return missing === undefined ? null : error(path, value, `${pythonRepr(missing)} is a required property`);
  },
  anyOf: (schema, value, path, formats) =>
    schema.anyOf!.some((option) => validateSchema(option, value, path, formats) === null)
      ? null
      : error(path, value, `${pythonRepr(value)} is not valid under any of the given schemas`),
};

/** The first error of `value` against `schema`, or null when it is valid. */
export function validateSchema(
  schema: Schema,
  value: unknown,
  path: string[],
  formats: Readonly<Record<Format, FormatCheck>>,
): SchemaError | null {
  for (const keyword of Object.keys(schema) as Array<keyof Schema>) {
    const found = CHECKS[keyword](schema, value, path, formats);
    if (found !== null) return found;
  }
  return null;
}
