import { ConfigError } from '@lifeguard/runtime';
import type { ConfigKey, IntegerKey } from './config-keys.ts';
import { describeRaw, isMisspeltBoolean } from './values.ts';

/** Where a key's value came from. */
export type ConfigValueSource = 'default' | 'file' | 'environment';

/** A value that could not be used as given (default or clamped value used instead). */
export interface ConfigWarning {
  readonly key: string;
  /** The file path or `environment`. */
  readonly source: string;
  readonly problem: string;
  readonly value: string | null;
  /**
   * True when the value was kept because the operator allowed it on purpose (an interval below
   * InstanceHA's minimum with LIFEGUARD_UNSAFE_SHORT_INTERVALS): logged at info, not warn.
   */
  readonly allowed?: true;
}

/** A raw value given for a key: from the environment (a string) or the file (any YAML value). */
export interface GivenValue {
  readonly raw: unknown;
  /** The file path or `environment`, for warnings and errors. */
  readonly source: string;
  readonly origin: 'file' | 'environment';
}

/** A key's value as read, where it came from, and the warnings reading it gave. */
export interface KeyReading {
  readonly value: unknown;
  readonly origin: ConfigValueSource;
  readonly warnings: ReadonlyArray<ConfigWarning>;
}

export interface ReadKeyOptions {
  /** Keep integers below their minimum (down to 1, or 0 where 0 is allowed), with a warning. */
  readonly allowBelowMinimum: boolean;
  /** A UDP port: out of range → the default, never clamped and never kept below the minimum. */
  readonly port: boolean;
}

/**
 * Reads one key with InstanceHA's rules (docs/instance-ha-rules.md#configuration-files): not given →
 * its default; unreadable by its schema → its default with a warning; an integer out of range →
 * clamped with a warning (a port → its default); a boolean string that is not a known word → false
 * with a warning (as InstanceHA reads it).
 * @throws ConfigError naming the key and the source for an invalid LOGLEVEL
 */
export function readKey(
  name: string,
  key: ConfigKey,
  given: GivenValue | null,
  options: ReadKeyOptions,
): KeyReading {
  if (given === null) return { value: key.default, origin: 'default', warnings: [] };
  const warning = (problem: string): ConfigWarning => ({
    key: name,
    source: given.source,
    problem,
    value: describeRaw(given.raw),
  });
  const parsed = key.schema.safeParse(given.raw);
  if (!parsed.success) {
    // A list that cannot be read would silently skip nothing (SKIP_SERVERS_*): refused, as LOGLEVEL is.
    if (key.kind === 'log-level' || key.kind === 'list') throw new ConfigError([{ ...warning(key.problem) }]);
    const problem = `${key.problem}; using the default ${JSON.stringify(key.default)}`;
    return { value: key.default, origin: 'default', warnings: [warning(problem)] };
  }
  if (key.kind === 'integer') return clamped(key, parsed.data as number, given, warning, options);
  if (key.kind === 'boolean' && isMisspeltBoolean(given.raw)) {
    const problem =
      'not one of true/1/yes/on/enabled or false/0/no/off/disabled; read as false (as InstanceHA reads it)';
    return { value: parsed.data, origin: given.origin, warnings: [warning(problem)] };
  }
  return { value: parsed.data, origin: given.origin, warnings: [] };
}

/** An integer within its key's range, as InstanceHA clamps it (ports: the default instead). */
function clamped(
  key: IntegerKey,
  value: number,
  given: GivenValue,
  warning: (problem: string) => ConfigWarning,
  options: ReadKeyOptions,
): KeyReading {
  if (value >= key.minimum && value <= key.maximum) return { value, origin: given.origin, warnings: [] };
  const range = `${key.minimum}–${key.maximum}`;
  if (options.port) {
    const problem = `out of range ${range}; using the default ${key.default}`;
    return { value: key.default, origin: 'default', warnings: [warning(problem)] };
  }
  if (options.allowBelowMinimum && value < key.minimum && value >= Math.min(key.minimum, 1)) {
    const problem = `below InstanceHA's minimum ${key.minimum} ${key.unit}; kept because short intervals are allowed`;
    return { value, origin: given.origin, warnings: [{ ...warning(problem), allowed: true }] };
  }
  const bound = value < key.minimum ? key.minimum : key.maximum;
  const problem = `out of range ${range} ${key.unit}; clamped to ${bound}`;
  return { value: bound, origin: given.origin, warnings: [warning(problem)] };
}
