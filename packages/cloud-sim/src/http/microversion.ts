/** The microversion range the simulated Nova offers: Zed's (2.1 to 2.93), as the harness's Nova. */
export const MIN_MICROVERSION = '2.1';
export const MAX_MICROVERSION = '2.93';

function parts(version: string): [number, number] {
  const [major, minor] = version.split('.');
  return [Number(major), Number(minor)];
}

const comparisons = new Map<string, boolean>();

/** True when `version` is `minimum` or later (memoised: views ask it many times per request). */
export function atLeast(version: string, minimum: string): boolean {
  const key = `${version}>=${minimum}`;
  let result = comparisons.get(key);
  if (result === undefined) {
    const [major, minor] = parts(version);
    const [minimumMajor, minimumMinor] = parts(minimum);
    result = major === minimumMajor ? minor >= minimumMinor : major > minimumMajor;
    if (comparisons.size < 10_000) comparisons.set(key, result);
  }
  return result;
}

/** The outcome of reading a request's microversion headers. */
export type MicroversionResult =
  | { ok: true; version: string }
  | { ok: false; status: 400 | 406; message: string };

/**
 * Reads `OpenStack-API-Version: compute <v>` (or the legacy `X-OpenStack-Nova-API-Version: <v>`);
 * none means 2.1, `latest` the maximum. Errors as Nova words them: a malformed version is 400, one
 * outside the range 406.
 */
export function requestedMicroversion(
  headers: Record<string, string | string[] | undefined>,
): MicroversionResult {
  let requested: string | undefined;
  const modern = headers['openstack-api-version'];
  for (const value of (Array.isArray(modern) ? modern.join(',') : (modern ?? '')).split(',')) {
    const match = /^\s*compute\s+(\S+)\s*$/i.exec(value);
    if (match) requested = match[1];
  }
  if (requested === undefined) {
    const legacy = headers['x-openstack-nova-api-version'];
    requested = Array.isArray(legacy) ? legacy[0] : legacy;
  }
  if (requested === undefined || requested === '') return { ok: true, version: MIN_MICROVERSION };
  if (requested.toLowerCase() === 'latest') return { ok: true, version: MAX_MICROVERSION };
  if (!/^\d+\.\d+$/.test(requested) || /^\d+\.0\d/.test(requested)) {
    return {
      ok: false,
      status: 400,
      message: `API Version String ${requested} is of invalid format. Must be of format MajorNum.MinorNum.`,
    };
  }
  if (!atLeast(requested, MIN_MICROVERSION) || !atLeast(MAX_MICROVERSION, requested)) {
    return {
      ok: false,
      status: 406,
      message: `Version ${requested} is not supported by the API. Minimum is ${MIN_MICROVERSION} and maximum is ${MAX_MICROVERSION}.`,
    };
  }
  return { ok: true, version: requested };
}
