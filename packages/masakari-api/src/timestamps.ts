/**
 * Masakari's time formats (docs/masakari-api.md#6-representations): every timestamp is written as
 * `YYYY-MM-DDTHH:MM:SS.ffffff`, UTC with no zone designator, and `generated_time` is read as
 * Python's iso8601 reads it (a date, optionally a space or `T` and a time, optionally `Z` or an
 * offset; no zone means UTC).
 */
import type { MasakariTimestamp } from './records.ts';

/** `date` in Masakari's format (milliseconds, then `000`). */
export function masakariTimestamp(date: Date): MasakariTimestamp {
  return `${date.toISOString().slice(0, 23)}000`;
}

const ISO8601 =
  /^(\d{4})(?:-(\d{1,2})|(\d{2}))(?:(?:-(\d{1,2})|(\d{2}))(?:[ T](\d{2})(?::?(\d{2}))?(?::?(\d{1,2})(?:[.,](\d+))?)?(Z|([-+])(\d{2})(?::?(\d{2}))?)?)?)?$/;

const pad = (value: number, width: number): string => String(value).padStart(width, '0');

/** The parts of a parsed date-time, before its offset is applied. */
interface DateTimeParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  microsecond: number;
  offsetMinutes: number;
}

function partsOf(match: RegExpExecArray): DateTimeParts {
  const number = (text: string | undefined): number => (text === undefined ? 0 : Number(text));
  const fraction = match[9];
  const sign = match[11] === '-' ? -1 : 1;
  return {
    year: number(match[1]),
    month: number(match[2] ?? match[3]),
    day: match[4] === undefined && match[5] === undefined ? 1 : number(match[4] ?? match[5]),
    hour: number(match[6]),
    minute: number(match[7]),
    second: number(match[8]),
    microsecond: fraction === undefined ? 0 : Math.floor(Number(`0.${fraction}`) * 1e6 + 1e-6),
    offsetMinutes:
      match[10] === undefined || match[10] === 'Z' ? 0 : sign * (number(match[12]) * 60 + number(match[13])),
  };
}

function validParts(parts: DateTimeParts): boolean {
  const { year, month, day, hour, minute, second } = parts;
  if (year < 1 || month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return false;
  const lastDay = new Date(0);
  lastDay.setUTCFullYear(year, month, 0);
  const daysInMonth = lastDay.getUTCDate();
  return day >= 1 && day <= daysInMonth;
}

/** A parsed `generated_time`: Masakari's format in UTC, and microseconds since the epoch. */
export interface ParsedDateTime {
  timestamp: MasakariTimestamp;
  epochMicroseconds: number;
}

/**
 * Reads a date-time as Masakari's `date-time` format check and `generated_time` conversion do, and
 * returns it in UTC; null when the text is not such a date-time (or names a day that does not exist).
 */
export function parseDateTime(text: string): ParsedDateTime | null {
  const match = ISO8601.exec(text);
  if (match === null) return null;
  const parts = partsOf(match);
  if (!validParts(parts)) return null;
  const utc = new Date(0);
  // setUTCFullYear, not Date.UTC, which reads years 0-99 as 1900-1999
  utc.setUTCFullYear(parts.year, parts.month - 1, parts.day);
  utc.setUTCHours(parts.hour, parts.minute - parts.offsetMinutes, parts.second, 0);
  if (utc.getUTCFullYear() < 1 || utc.getUTCFullYear() > 9999) return null;
  const whole = `${pad(utc.getUTCFullYear(), 4)}-${pad(utc.getUTCMonth() + 1, 2)}-${pad(utc.getUTCDate(), 2)}T${pad(utc.getUTCHours(), 2)}:${pad(utc.getUTCMinutes(), 2)}:${pad(utc.getUTCSeconds(), 2)}`;
  return {
    timestamp: `${whole}.${pad(parts.microsecond, 6)}`,
    epochMicroseconds: utc.getTime() * 1000 + parts.microsecond,
  };
}

/** Microseconds since the epoch of a timestamp in Masakari's format. */
export function epochMicroseconds(timestamp: MasakariTimestamp): number {
  const milliseconds = Date.parse(`${timestamp.slice(0, 19)}Z`);
  return milliseconds * 1000 + Number(timestamp.slice(20, 26));
}
