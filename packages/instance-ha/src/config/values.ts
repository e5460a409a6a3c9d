import { z } from 'zod';

/**
 * How a raw config value is read, with InstanceHA's rules (docs/instance-ha-rules.md#configuration-files),
 * as zod schemas: each accepts a string from the environment or any YAML value from the file and
 * gives the typed value, or fails (the loader then uses the key's default and warns).
 */

const INTEGER_TEXT = /^\s*[+-]?\d+(_\d+)*\s*$/;

/** The strings (lower-cased, trimmed) that mean true; any other string means false. */
export const TRUE_STRINGS: ReadonlyArray<string> = ['true', '1', 'yes', 'on', 'enabled'];

/** The strings (lower-cased, trimmed) written for false; InstanceHA reads any other string as false too. */
export const FALSE_STRINGS: ReadonlyArray<string> = ['false', '0', 'no', 'off', 'disabled'];

const booleanWord = (text: string) => text.trim().toLowerCase();

/**
 * As Python's `int()`: integers, integer strings (`"45"`, `" 45 "`, `"1_000"`) and YAML floats
 * (truncated toward zero). Booleans, other strings, lists, mappings, null and infinities fail.
 * The range is not checked here: the loader clamps (docs/instance-ha-rules.md#configuration-keys).
 */
export const IntegerValue = z.union([
  z.number().transform(Math.trunc),
  z
    .string()
    .regex(INTEGER_TEXT)
    .transform((text) => Number(text.replaceAll('_', ''))),
]);

/**
 * A YAML boolean, or a string that is true when its trimmed lower case is one of TRUE_STRINGS and
 * false otherwise, as in InstanceHA (see isMisspeltBoolean for the warning). Numbers, null and lists fail.
 */
export const BooleanValue = z.union([
  z.boolean(),
  z.string().transform((text) => TRUE_STRINGS.includes(booleanWord(text))),
]);

/** A non-empty string, trimmed (a YAML number is taken as its text). */
export const TextValue = z.union([z.number().transform(String), z.string().trim().min(1)]);

/** A YAML list of scalars, or a comma-separated string; items trimmed, empty ones dropped; null is empty. */
export const ListValue = z
  .union([
    z.null().transform((): string[] => []),
    z.string().transform((text) => text.split(',')),
    z.number().transform((value) => [String(value)]),
    z.array(z.union([z.string(), z.number().transform(String)])),
  ])
  .transform((items) => items.map((item) => item.trim()).filter((item) => item !== ''));

/** A file path (trimmed), or null when empty or null. */
export const PathValue = z.union([
  z.null(),
  z.literal('').transform(() => null),
  z.string().transform((text) => text.trim()),
]);

/** LOGLEVEL values InstanceHA accepts (upper-cased first), mapped to pino's levels. */
export const LOG_LEVELS = {
  DEBUG: 'debug',
  INFO: 'info',
  WARNING: 'warn',
  ERROR: 'error',
  CRITICAL: 'fatal',
} as const;
export type InstanceHaLogLevel = keyof typeof LOG_LEVELS;

/** LOGLEVEL: any value, upper-cased, must name one of LOG_LEVELS (an invalid one stops start-up). */
export const LogLevelValue = z
  .unknown()
  .transform((raw) => String(raw).trim().toUpperCase())
  .pipe(z.enum(Object.keys(LOG_LEVELS) as [InstanceHaLogLevel, ...InstanceHaLogLevel[]]));

/**
 * A string BooleanValue reads as false that is not one of FALSE_STRINGS either: a misspelling such as
 * `nope`, `ture` or `yes please`, worth a warning.
 */
export function isMisspeltBoolean(raw: unknown): boolean {
  if (typeof raw !== 'string') return false;
  const word = booleanWord(raw);
  return !TRUE_STRINGS.includes(word) && !FALSE_STRINGS.includes(word);
}

/** A short, printable description of a raw value for warnings. */
export function describeRaw(raw: unknown): string {
  const text = typeof raw === 'string' ? JSON.stringify(raw) : JSON.stringify(raw ?? null);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
