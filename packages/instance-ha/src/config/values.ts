import type { BooleanKey, IntegerKey, ListKey, PathKey, StringKey } from './config-keys.ts';

/**
 * Value conversions with InstanceHA's rules (docs/instance-ha-rules.md#configuration-files). Each returns the value,
 * or a problem text when the value cannot be used (the caller falls back to the default and warns).
 */
export type Converted<Value> =
  | {
      readonly ok: true;
      readonly value: Value;
      readonly clampedFrom?: number;
      /** Set when a string was not a word InstanceHA knows (read as false): the caller warns. */
      readonly unrecognised?: true;
    }
  | { readonly ok: false; readonly problem: string };

const INTEGER_TEXT = /^\s*[+-]?\d+(_\d+)*\s*$/;

/** The strings (lower-cased, trimmed) that mean true; any other string means false. */
export const TRUE_STRINGS: ReadonlyArray<string> = ['true', '1', 'yes', 'on', 'enabled'];

/** The strings (lower-cased, trimmed) written for false; InstanceHA reads any other string as false too. */
export const FALSE_STRINGS: ReadonlyArray<string> = ['false', '0', 'no', 'off', 'disabled'];

/**
 * As Python's `int()` then clamping: integers, integer strings (`"45"`, `" 45 "`, `"1_000"`) and
 * YAML floats (truncated toward zero) are accepted; out-of-range values are clamped to the range.
 * Booleans, other strings, lists and mappings are unparsable.
 */
export function toInteger(raw: unknown, key: IntegerKey): Converted<number> {
  let parsed: number;
  if (typeof raw === 'number' && Number.isFinite(raw)) parsed = Math.trunc(raw);
  else if (typeof raw === 'string' && INTEGER_TEXT.test(raw)) parsed = Number(raw.replaceAll('_', ''));
  else return { ok: false, problem: `not an integer (${key.unit})` };
  if (parsed < key.minimum) return { ok: true, value: key.minimum, clampedFrom: parsed };
  if (parsed > key.maximum) return { ok: true, value: key.maximum, clampedFrom: parsed };
  return { ok: true, value: parsed };
}

/**
 * A YAML boolean, or a string whose trimmed lower case is one of true/1/yes/on/enabled (any other
 * string is false, as in InstanceHA; a string that is not one of false/0/no/off/disabled either is
 * marked `unrecognised`, e.g. a misspelling such as `nope` or `yes please`). Other types (numbers,
 * null, lists) cannot be used.
 */
export function toBoolean(raw: unknown, _key: BooleanKey): Converted<boolean> {
  if (typeof raw === 'boolean') return { ok: true, value: raw };
  if (typeof raw === 'string') {
    const word = raw.trim().toLowerCase();
    if (TRUE_STRINGS.includes(word)) return { ok: true, value: true };
    return FALSE_STRINGS.includes(word)
      ? { ok: true, value: false }
      : { ok: true, value: false, unrecognised: true };
  }
  return { ok: false, problem: 'not a boolean (true/false, yes/no, on/off, 1/0, enabled)' };
}

/** A string (numbers are turned into their text); an empty string cannot be used. */
export function toText(raw: unknown, _key: StringKey): Converted<string> {
  if (typeof raw === 'number' && Number.isFinite(raw)) return { ok: true, value: String(raw) };
  if (typeof raw === 'string' && raw.trim() !== '') return { ok: true, value: raw.trim() };
  return { ok: false, problem: 'not a non-empty string' };
}

/** A YAML list of scalars, or a comma-separated string; items are trimmed and empty ones dropped. */
export function toList(raw: unknown, _key: ListKey): Converted<string[]> {
  if (raw === null) return { ok: true, value: [] };
  if (typeof raw === 'string') {
    return {
      ok: true,
      value: raw
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== ''),
    };
  }
  if (Array.isArray(raw) && raw.every((item) => typeof item === 'string' || typeof item === 'number')) {
    return { ok: true, value: raw.map((item) => String(item).trim()).filter((item) => item !== '') };
  }
  return { ok: false, problem: 'not a list of strings or a comma-separated string' };
}

/** A file path (a non-empty string), or null when empty. */
export function toPath(raw: unknown, _key: PathKey): Converted<string | null> {
  if (raw === null || raw === '') return { ok: true, value: null };
  if (typeof raw === 'string') return { ok: true, value: raw.trim() };
  return { ok: false, problem: 'not a file path' };
}

/** A short, printable description of a raw value for warnings. */
export function describeRaw(raw: unknown): string {
  const text = typeof raw === 'string' ? JSON.stringify(raw) : JSON.stringify(raw ?? null);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
