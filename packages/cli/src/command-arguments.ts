import { InvalidArgumentError } from '@commander-js/extra-typings';
import { LIFEGUARD_EVENT_TYPES, type LifeguardEventType } from '@lifeguard/contracts';

/**
 * Parsers of command-line values. Each throws commander's InvalidArgumentError, which the command
 * reports as `error: option '...' argument '...' is invalid. <reason>` with exit status 2.
 */

/** A whole number ≥ 1 (counts, limits). */
export function positiveWholeNumber(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new InvalidArgumentError('must be a whole number ≥ 1');
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
