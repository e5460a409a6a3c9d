import { z } from 'zod';
import { MicroversionNotSupportedError } from '../errors.ts';

/** The microversion lifeguard prefers: lock reasons (2.73), and evacuated servers keep their power state (< 2.95). */
export const PREFERRED_MICROVERSION = '2.73';
/** The oldest usable one: services and hypervisors by UUID, `PUT /os-services/{id}`. */
export const MINIMUM_MICROVERSION = '2.53';

/** `GET <compute endpoint>` answers `{"version": {...}}`; `GET /` answers `{"versions": [...]}`. */
const VersionEntry = z.looseObject({
  id: z.string(),
  status: z.string().optional(),
  version: z.string(),
  min_version: z.string(),
});
export const VersionDocument = z.union([
  z.object({ version: VersionEntry }),
  z.object({ versions: z.array(VersionEntry) }),
]);

/** `2.73` → [2, 73]; an empty string (v2.0's entry) → [0, 0]. */
export function parseMicroversion(text: string): [number, number] {
  const match = /^(\d+)\.(\d+)$/.exec(text.trim());
  return match ? [Number(match[1]), Number(match[2])] : [0, 0];
}

/** Negative, zero or positive as `left` is older than, equal to or newer than `right`. */
export function compareMicroversions(left: string, right: string): number {
  const [leftMajor, leftMinor] = parseMicroversion(left);
  const [rightMajor, rightMinor] = parseMicroversion(right);
  return leftMajor === rightMajor ? leftMinor - rightMinor : leftMajor - rightMajor;
}

/**
 * Chooses the microversion from Nova's range: 2.73 when the range contains it, else the newest
 * version when it is at least 2.53.
 * @throws MicroversionNotSupportedError when the maximum is below 2.53 (or the minimum above 2.73)
 */
export function chooseMicroversion(endpoint: string, minimum: string, maximum: string): string {
  const lowest = minimum === '' ? '2.1' : minimum;
  if (compareMicroversions(maximum, PREFERRED_MICROVERSION) >= 0) {
    if (compareMicroversions(lowest, PREFERRED_MICROVERSION) <= 0) return PREFERRED_MICROVERSION;
    throw new MicroversionNotSupportedError(endpoint, minimum, maximum);
  }
  if (compareMicroversions(maximum, MINIMUM_MICROVERSION) >= 0) return maximum;
  throw new MicroversionNotSupportedError(endpoint, minimum, maximum);
}

/**
 * The URL of the version document for a compute endpoint: the endpoint without a trailing project id
 * (`http://nova:8774/v2.1/<project_id>` → `http://nova:8774/v2.1`).
 */
export function versionDocumentUrl(endpoint: string): string {
  const url = new URL(endpoint);
  const segments = url.pathname.replace(/\/+$/, '').split('/');
  const index = segments.findIndex((segment) => /^v2(\.\d+)?$/.test(segment));
  if (index >= 0) url.pathname = segments.slice(0, index + 1).join('/');
  return url.toString().replace(/\/+$/, '');
}

/** The v2.1 entry of a version document: `{min_version, version}`. */
export function microversionRange(
  document: z.output<typeof VersionDocument>,
): { minimum: string; maximum: string } | null {
  if ('version' in document)
    return { minimum: document.version.min_version, maximum: document.version.version };
  const entry =
    document.versions.find((each) => each.id === 'v2.1') ??
    document.versions.find((each) => each.status === 'CURRENT');
  return entry ? { minimum: entry.min_version, maximum: entry.version } : null;
}
