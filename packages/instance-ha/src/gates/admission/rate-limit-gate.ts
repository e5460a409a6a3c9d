/**
 * Gate G8 (docs/instance-ha-rules.md#g8-rate-limit): admit the first MAX_HOSTS_PER_CYCLE new failures in Nova's listing order and
 * defer the rest to later cycles. Resume candidates are not counted.
 */
export function applyRateLimit<Item>(
  items: ReadonlyArray<Item>,
  maxHostsPerCycle: number,
): { admitted: Item[]; deferred: Item[] } {
  return { admitted: items.slice(0, maxHostsPerCycle), deferred: items.slice(maxHostsPerCycle) };
}
