import { isIP, SocketAddress } from 'node:net';

/**
 * The canonical text of an IP address, so a configured address and a packet's source compare equal:
 * IPv6 in lower-case compressed form without a zone (`2001:DB8:0::0010` → `2001:db8::10`), and an
 * IPv4-mapped IPv6 address as plain IPv4 (`::ffff:192.0.2.1` → `192.0.2.1`, as a dual-stack socket
 * reports IPv4 senders).
 * @returns the canonical address, or null when `address` is not an IP literal
 */
export function canonicalAddress(address: string): string | null {
  const trimmed = address.trim();
  const withoutZone = trimmed.includes('%') ? trimmed.slice(0, trimmed.indexOf('%')) : trimmed;
  const family = isIP(withoutZone);
  if (family === 4) return withoutZone;
  if (family !== 6) return null;
  const compressed = new SocketAddress({ address: withoutZone, family: 'ipv6' }).address.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(compressed);
  if (mapped && isIP(mapped[1]!) === 4) return mapped[1]!;
  return compressed;
}
