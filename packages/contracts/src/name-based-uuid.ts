import { createHash } from 'node:crypto';

/**
 * RFC 9562 version 5: the SHA-1 of the namespace's 16 bytes and the name's UTF-8, its first 16 bytes
 * with the version (5) and variant (10) bits set. The same ids as the `uuid` package's `v5`, made
 * with one hash call. `namespace` is a UUID (with or without hyphens, any case).
 */
export function nameBasedUuid(namespace: string, name: string): string {
  const namespaceBytes = Buffer.from(namespace.replaceAll('-', ''), 'hex');
  if (namespaceBytes.length !== 16) throw new TypeError(`not a UUID: ${namespace}`);
  const bytes = createHash('sha1').update(namespaceBytes).update(name, 'utf8').digest();
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex', 0, 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
