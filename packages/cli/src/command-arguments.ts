import { InvalidArgumentError } from '@commander-js/extra-typings';
import { LIFEGUARD_EVENT_TYPES, type LifeguardEventType } from '@lifeguard/contracts';

/**
 * Parsers of command-line values. Each throws commander's InvalidArgumentError, which the command
 * reports as `error: option '...' argument '...' is invalid. <reason>` with exit status 2.
 */

/**
 * A whole number ≥ 1 (counts, limits), in decimal digits: `1e1`, `0x10` or `5.0` are refused rather
 * than read as 10, 16 or 5, and so is a number too large to be exact (above 2^53 − 1).
 */
export function positiveWholeNumber(value: string): number {
  const number = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < 1)
    throw new InvalidArgumentError('must be a whole number ≥ 1');
  return number;
}

/** A number of seconds > 0 (fractions allowed). */
export function positiveSeconds(value: string): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0)
    throw new InvalidArgumentError('must be a number of seconds > 0');
  return number;
}

/** Text that is not blank, trimmed. */
export function nonEmptyText(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('must not be empty');
  return value.trim();
}

/**
 * One more value of a repeatable `--type <types...>`: an event type lifeguard publishes
 * (LIFEGUARD_EVENT_TYPES), added to those before it.
 */
export function eventTypes(value: string, previous: LifeguardEventType[] | undefined): LifeguardEventType[] {
  const type = LIFEGUARD_EVENT_TYPES.find((known) => known === value);
  if (type === undefined) {
    throw new InvalidArgumentError(`not an event type (known: ${LIFEGUARD_EVENT_TYPES.join(', ')})`);
  }
  return [...(previous ?? []), type];
}

const UNIT_MILLISECONDS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A moment in the past: a duration back from `now` (`90s`, `10m`, `2h`, `1d`; fractions allowed) or an
 * ISO 8601 time (`2026-12-04T15:00:00Z`).
 */
export function pastMoment(value: string, now: () => number = Date.now): Date {
  const duration = /^(\d+(?:\.\d+)?)(s|m|h|d)$/.exec(value.trim());
  if (duration) return new Date(now() - Number(duration[1]) * UNIT_MILLISECONDS[duration[2]!]!);
  const time = /^\d{4}-\d{2}-\d{2}T/.test(value.trim()) ? Date.parse(value.trim()) : Number.NaN;
  if (Number.isNaN(time))
    throw new InvalidArgumentError('must be a duration back from now (90s, 10m, 2h, 1d) or an ISO 8601 time');
  return new Date(time);
}
