/**
 * Masakari's microversions (docs/masakari-api.md#5-microversions): `OpenStack-API-Version:
 * instance-ha X.Y` chooses one between MIN_MICROVERSION and MAX_MICROVERSION; none means 1.0.
 */

export interface Microversion {
  major: number;
  minor: number;
}

export const MIN_MICROVERSION: Microversion = { major: 1, minor: 0 };
/** 1.3 adds the vmoves of a notification (Masakari 15): docs/masakari-api.md#what-lifeguard-serves. */
export const MAX_MICROVERSION: Microversion = { major: 1, minor: 3 };

export const microversionText = (version: Microversion): string => `${version.major}.${version.minor}`;

export function compareMicroversions(a: Microversion, b: Microversion): number {
  return a.major === b.major ? a.minor - b.minor : a.major - b.major;
}

/** What the request's version header asks for. */
export type MicroversionChoice =
  | { kind: 'version'; version: Microversion }
  | { kind: 'malformed'; text: string; message: string }
  | { kind: 'unsupported'; version: Microversion; message: string };

/**
 * The `instance-ha` entry of an `OpenStack-API-Version` header as microversion_parse reads it: the
 * header may list several services (comma-separated); the last entry for `instance-ha` (any case)
 * wins. Returns null when there is none.
 */
export function requestedVersionText(header: string | undefined): string | null {
  if (header === undefined) return null;
  for (const entry of header.split(',').reverse()) {
    const match = /^(\S+)\s+(.+)$/.exec(entry.trim());
    if (match !== null && match[1]!.toLowerCase() === 'instance-ha') return match[2]!.trim();
  }
  return null;
}

/** The microversion a request asks for, or why it cannot be served (400 malformed, 406 out of range). */
export function chooseMicroversion(header: string | undefined): MicroversionChoice {
  const text = requestedVersionText(header);
  if (text === null) return { kind: 'version', version: MIN_MICROVERSION };
  if (text === 'latest') return { kind: 'version', version: MAX_MICROVERSION };
  const match = /^([1-9]\d*)\.([1-9]\d*|0)$/.exec(text);
  if (match === null)
    return {
      kind: 'malformed',
      text,
      message: `API Version String ${text} is of invalid format. Must be of format MajorNum.MinorNum.`,
    };
  const version = { major: Number(match[1]), minor: Number(match[2]) };
  if (
    compareMicroversions(version, MIN_MICROVERSION) < 0 ||
    compareMicroversions(version, MAX_MICROVERSION) > 0
  )
    return {
      kind: 'unsupported',
      version,
      message: `Version ${microversionText(version)} is not supported by the API. Minimum is ${microversionText(MIN_MICROVERSION)} and maximum is ${microversionText(MAX_MICROVERSION)}.`,
    };
  return { kind: 'version', version };
}

/** Whether `version` is at least `minimum`. */
export const atLeast = (version: Microversion, minimum: Microversion): boolean =>
  compareMicroversions(version, minimum) >= 0;
