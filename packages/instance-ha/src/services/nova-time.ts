const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|z|[+-]\d{2}:?\d{2})?$/;

/**
 * Parses a Nova timestamp (`updated_at`): ISO 8601 with or without fraction and zone; no zone means
 * UTC (Nova returns naive UTC such as `2026-07-28T09:18:12.000000`), as InstanceHA (docs/instance-ha-rules.md#service-categorisation).
 * @returns the instant, or null when the text is not such a timestamp
 */
export function parseNovaTimestamp(text: string | null | undefined): Date | null {
  if (typeof text !== 'string') return null;
  const match = ISO_8601.exec(text.trim());
  if (!match) return null;
  const [, year, month, day, hour, minute, second, fraction, zone] = match;
  const milliseconds = fraction ? Math.floor(Number(`0.${fraction}`) * 1000) : 0;
  let epoch = Date.UTC(
    Number(year),
    Number(month) - 1,
    Number(day),
    Number(hour),
    Number(minute),
    Number(second),
    milliseconds,
  );
  const calendar = new Date(epoch);
  if (
    Number.isNaN(epoch) ||
    calendar.getUTCDate() !== Number(day) ||
    calendar.getUTCMonth() !== Number(month) - 1 ||
    Number(hour) > 23 ||
    Number(minute) > 59 ||
    Number(second) > 59
  ) {
    return null;
  }
  if (zone && zone.toUpperCase() !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    epoch -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000;
  }
  return new Date(epoch);
}
