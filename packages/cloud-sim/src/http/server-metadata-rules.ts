import type { SimServer } from '../model/records.ts';
import { NovaFault } from './nova-plumbing.ts';

/** Nova's metadata key pattern (parameter_types.metadata): 1 to 255 letters, digits, `-_:. `. */
export const METADATA_KEY_PATTERN = '^[a-zA-Z0-9-_:. ]{1,255}$';
const METADATA_KEY = new RegExp(METADATA_KEY_PATTERN);
/** The longest metadata value Nova's schema takes, in characters. */
export const METADATA_VALUE_MAX_LENGTH = 255;
/** Nova's default `[quota] metadata_items`: items a server may have at most. */
export const METADATA_ITEMS_QUOTA = 128;
/** The vm_states in which Nova changes a server's metadata (compute/api.py check_instance_state). */
const METADATA_VM_STATES = ['active', 'paused', 'suspended', 'stopped'];

/** A value as Python's repr() writes it, as jsonschema's messages show values. */
export function pythonRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') {
    const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
    const escaped = value
      .replace(/\\/g, '\\\\')
      .replace(/\n/g, '\\n')
      .replace(/\r/g, '\\r')
      .replace(/\t/g, '\\t');
    return `${quote}${quote === "'" ? escaped.replace(/'/g, "\\'") : escaped}${quote}`;
  }
  if (Array.isArray(value)) return `[${value.map(pythonRepr).join(', ')}]`;
  const entries = Object.entries(value as Record<string, unknown>);
  return `{${entries.map(([key, item]) => `${pythonRepr(key)}: ${pythonRepr(item)}`).join(', ')}}`;
}

/** A value as Python's str() writes it (Nova's `Value: %s`): a string bare, anything else as repr. */
const pythonStr = (value: unknown): string => (typeof value === 'string' ? value : pythonRepr(value));

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Nova's 400 for a schema error at `field` (the last step of its path), as its validator words it. */
function fieldFault(field: string, value: unknown, message: string): NovaFault {
  return new NovaFault(
    400,
    `Invalid input for field/attribute ${field}. Value: ${pythonStr(value)}. ${message}`,
  );
}

/**
 * Checks a metadata mapping as Nova's schema does, in its order (type, each value's type and length,
 * keys matching no pattern; for `meta` at most and at least one item).
 * @throws NovaFault 400 worded as Nova's validator words the first error
 */
function checkMetadata(field: 'metadata' | 'meta', value: unknown): Record<string, string> {
  if (!isObject(value)) throw fieldFault(field, value, `${pythonRepr(value)} is not of type 'object'`);
  for (const [key, item] of Object.entries(value)) {
    if (!METADATA_KEY.test(key)) continue;
    if (typeof item !== 'string') throw fieldFault(key, item, `${pythonRepr(item)} is not of type 'string'`);
    if ([...item].length > METADATA_VALUE_MAX_LENGTH)
      throw fieldFault(key, item, `${pythonRepr(item)} is too long`);
  }
  const extras = Object.keys(value)
    .filter((key) => !METADATA_KEY.test(key))
    .sort();
  if (extras.length > 0) {
    const verb = extras.length === 1 ? 'does' : 'do';
    const message = `${extras.map(pythonRepr).join(', ')} ${verb} not match any of the regexes: ${pythonRepr(METADATA_KEY_PATTERN)}`;
    throw fieldFault(field, value, message);
  }
  const count = Object.keys(value).length;
  if (field === 'meta' && count < 1)
    throw fieldFault(field, value, `${pythonRepr(value)} does not have enough properties`);
  if (field === 'meta' && count > 1)
    throw fieldFault(field, value, `${pythonRepr(value)} has too many properties`);
  return value as Record<string, string>;
}

/**
 * The metadata of a request body `{"<field>": {...}}` (POST and PUT `/servers/{id}/metadata`:
 * `metadata`; PUT `/servers/{id}/metadata/{key}`: `meta`, one item), checked as Nova's schema
 * (server_metadata.py) checks it, before the server is looked up. Pure.
 * @throws NovaFault 400 with Nova's words: not an object, a bad key or value, the field missing,
 *   another top-level property
 */
export function metadataBody(field: 'metadata' | 'meta', body: unknown): Record<string, string> {
  const given = body === undefined ? {} : body;
  if (!isObject(given)) throw new NovaFault(400, `${pythonRepr(given)} is not of type 'object'`);
  const metadata = field in given ? checkMetadata(field, given[field]) : null;
  if (metadata === null) throw new NovaFault(400, `${pythonRepr(field)} is a required property`);
  const extras = Object.keys(given)
    .filter((key) => key !== field)
    .sort();
  if (extras.length > 0)
    throw new NovaFault(
      400,
      `Additional properties are not allowed (${extras.map(pythonRepr).join(', ')} ${extras.length === 1 ? 'was' : 'were'} unexpected)`,
    );
  return metadata;
}

/**
 * Whether Nova lets the server's metadata change now (compute/api.py: vm_state active, paused,
 * suspended or stopped, no task_state, launched once; a lock does not stop an admin). Pure.
 * @param action `update metadata` or `delete metadata`, as Nova's 409 names it
 * @throws NovaFault 409 "Cannot '<action>' instance <id> while it is in <attribute> <state>"
 */
export function checkMetadataState(server: SimServer, action: string): void {
  const refuse = (attribute: string, state: unknown) =>
    new NovaFault(
      409,
      `Cannot '${action}' instance ${server.id} while it is in ${attribute} ${pythonStr(state)}`,
    );
  if (!METADATA_VM_STATES.includes(server.vmState)) throw refuse('vm_state', server.vmState);
  if (server.taskState !== null) throw refuse('task_state', server.taskState);
  if (server.launchedAt === null) throw refuse('launched_at', null);
}

/**
 * The server's metadata after a change: `items` merged into `current` (POST, PUT of one key) or in
 * its place (`replace`: PUT of the whole set), within Nova's default quota. Pure.
 * @throws NovaFault 403 "Maximum number of metadata items exceeds 128"
 */
export function changedMetadata(
  current: Readonly<Record<string, string>>,
  items: Readonly<Record<string, string>>,
  replace: boolean,
): Record<string, string> {
  const result = replace ? { ...items } : { ...current, ...items };
  if (Object.keys(result).length > METADATA_ITEMS_QUOTA)
    throw new NovaFault(403, `Maximum number of metadata items exceeds ${METADATA_ITEMS_QUOTA}`);
  return result;
}
