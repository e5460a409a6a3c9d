let lastSecond = Number.NaN;
let lastSecondText = '';

/** Nova's DB timestamps: `2026-11-30T08:30:06.000000` (no zone; microseconds). Whole seconds are cached. */
export function novaTimestamp(milliseconds: number, keepFraction = false): string {
  if (!keepFraction) {
    const second = Math.floor(milliseconds / 1000);
    if (second !== lastSecond) {
      lastSecond = second;
      lastSecondText = `${new Date(second * 1000).toISOString().slice(0, 19)}.000000`;
    }
    return lastSecondText;
  }
  const iso = new Date(milliseconds).toISOString();
  return `${iso.slice(0, 19)}.${iso.slice(20, 23)}000`;
}

/** Nova's API timestamps of servers (`created`, `updated`): `2026-11-30T08:30:03Z`. */
export function isoSeconds(milliseconds: number): string {
  return `${new Date(milliseconds).toISOString().slice(0, 19)}Z`;
}

/** Keystone's token timestamps: `2026-11-30T09:30:03.000000Z`. */
export function keystoneTimestamp(milliseconds: number): string {
  const iso = new Date(milliseconds).toISOString();
  return `${iso.slice(0, 23)}000Z`;
}

/**
 * Parses the timestamps clients send in filters (`changes-since`): ISO 8601 with or without a zone
 * (no zone means UTC, as Nova reads it).
 * @returns epoch milliseconds, or null when unparseable
 */
export function parseClientTimestamp(text: string): number | null {
  const withZone = /[zZ]|[+-]\d\d:?\d\d$/.test(text) ? text : `${text}Z`;
  const value = Date.parse(withZone.replace(/(\.\d{3})\d+/, '$1'));
  return Number.isNaN(value) ? null : value;
}
