/**
 * Text forms of times and durations for tables. Durations are given in milliseconds or seconds as
 * their names say; every function returns `-` for a missing value.
 */

/** `850 ms`, `12.3 s`, `4 min 05 s`, `2 h 03 min`, `3 d 4 h`. */
export function formatDuration(milliseconds: number | null | undefined): string {
  if (milliseconds === null || milliseconds === undefined || !Number.isFinite(milliseconds)) return '-';
  const negative = milliseconds < 0;
  const value = Math.abs(milliseconds);
  let text: string;
  if (value < 1000) text = `${Math.round(value)} ms`;
  else if (value < 60_000) text = `${(value / 1000).toFixed(1)} s`;
  else if (value < 3_600_000) {
    const minutes = Math.floor(value / 60_000);
    text = `${minutes} min ${String(Math.floor((value % 60_000) / 1000)).padStart(2, '0')} s`;
  } else if (value < 86_400_000) {
    const hours = Math.floor(value / 3_600_000);
    text = `${hours} h ${String(Math.floor((value % 3_600_000) / 60_000)).padStart(2, '0')} min`;
  } else {
    text = `${Math.floor(value / 86_400_000)} d ${Math.floor((value % 86_400_000) / 3_600_000)} h`;
  }
  return negative ? `-${text}` : text;
}

/** How long ago an ISO 8601 time was, relative to `now`: `12.3 s ago`; `-` for null or unparsable. */
export function formatAge(iso: string | null | undefined, now: Date = new Date()): string {
  if (!iso) return '-';
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return '-';
  return `${formatDuration(now.getTime() - at)} ago`;
}

/** An ISO 8601 time shortened to seconds in UTC: `2026-11-30 08:15:02Z`; `-` for null. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '-';
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  return `${at.toISOString().slice(0, 19).replace('T', ' ')}Z`;
}

/** A time offset from a start, in seconds with milliseconds: `+12.345 s`. */
export function formatOffset(milliseconds: number): string {
  const sign = milliseconds < 0 ? '-' : '+';
  return `${sign}${(Math.abs(milliseconds) / 1000).toFixed(3)} s`;
}

/** Cuts text to `length` characters, ending with `…` when cut; newlines become spaces. */
export function truncate(text: string, length: number): string {
  const flat = text.replace(/\s*\n\s*/g, ' ');
  return flat.length <= length ? flat : `${flat.slice(0, Math.max(0, length - 1))}…`;
}
