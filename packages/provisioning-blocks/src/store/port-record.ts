import { Port } from '@lifeguard/contracts';

/** A port as stored: the Port record plus `revision`, bumped on every write (optimistic concurrency). */
export type StoredPort = Port & { readonly revision: number };

const PORT_FIELDS = Object.keys(Port.shape) as Array<keyof Port>;

/** Flattens port fields into HSET field/value pairs with JSON-encoded values. */
export function encodePortFields(fields: Partial<Port>): string[] {
  const pairs: string[] = [];
  for (const name of PORT_FIELDS) {
    if (fields[name] !== undefined) pairs.push(name, JSON.stringify(fields[name]));
  }
  return pairs;
}

/** Reads a port hash back (null for an empty hash, i.e. a missing port). */
export function decodePort(hash: Record<string, string>): StoredPort | null {
  if (!hash.id) return null;
  const raw: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(hash)) {
    if (field !== 'revision') raw[field] = JSON.parse(value);
  }
  return { ...Port.parse(raw), revision: Number(hash.revision ?? 0) };
}

const UUID_LIKE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** As oslo's uuidutils.is_uuid_like: 32 hex digits, hyphens optional, any case. */
export function isUuidLike(value: string): boolean {
  return UUID_LIKE.test(value);
}
