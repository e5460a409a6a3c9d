/**
 * The list parameters of Masakari's index calls (docs/masakari-api.md#8-list-parameters), applied to
 * the views as its database does: exact-match filters, `sort_key`/`sort_dir` (default `created_at
 * desc`, with `created_at` and `id` added as tie-breakers), `limit` (≥ 0, capped at 1000; 0 gives
 * nothing) and `marker` (the integer id of the last item seen; rows after it in the sort order).
 * Pure: parameters in, rows or a 400 message out.
 */

/** Masakari's `osapi_max_limit`: the page size and the largest `limit`. */
export const MAX_LIMIT = 1000;

export type Row = Readonly<Record<string, unknown>>;

export interface ListQuery {
  limit: number;
  marker: string | null;
  sortKeys: string[];
  sortDirections: Array<'asc' | 'desc'>;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

const invalid = (message: string): { ok: false; message: string } => ({ ok: false, message });

/** oslo's validate_integer as Python's int() reads the text: `limit must be an integer`, `must be >= 0`. */
function nonNegativeInteger(text: string, name: string): Parsed<number> {
  const trimmed = text.trim();
  if (!/^[+-]?\d+(?:_\d+)*$/.test(trimmed))
    return invalid(`Invalid input received: ${name} must be an integer`);
  const value = Number(trimmed.replaceAll('_', ''));
  if (value < 0) return invalid(`Invalid input received: ${name} must be >= 0`);
  return { ok: true, value };
}

/** `limit`, `page_size` (checked, unused), `marker`, `sort_key` and `sort_dir`. */
export function parseListQuery(params: URLSearchParams): Parsed<ListQuery> {
  let limit = MAX_LIMIT;
  for (const name of ['limit', 'page_size']) {
    const text = params.get(name);
    if (text === null) continue;
    const parsed = nonNegativeInteger(text, name);
    if (!parsed.ok) return parsed;
    if (name === 'limit') limit = Math.min(MAX_LIMIT, parsed.value);
  }
  const keys = params.getAll('sort_key').map((key) => key.trim());
  const directions = params.getAll('sort_dir').map((direction) => direction.trim());
  return {
    ok: true,
    value: {
      limit,
      marker: params.get('marker'),
      sortKeys: keys.length > 0 ? keys : ['created_at'],
      sortDirections: (directions.length > 0 ? directions : ['desc']) as Array<'asc' | 'desc'>,
    },
  };
}

/** The sort keys and directions with the tie-breakers added, as Masakari's `_process_sort_params`. */
export function sortOrder(query: ListQuery): Parsed<Array<[string, 'asc' | 'desc']>> {
  for (const direction of query.sortDirections) {
    if (direction !== 'asc' && direction !== 'desc')
      return invalid("Invalid input received: Unknown sort direction, must be 'asc' or 'desc'");
  }
  if (query.sortDirections.length > query.sortKeys.length)
    return invalid('Invalid input received: Sort direction size exceeds sort key size');
  const first = query.sortDirections[0]!;
  const order: Array<[string, 'asc' | 'desc']> = query.sortKeys.map((key, index) => [
    key,
    query.sortDirections[index] ?? first,
  ]);
  for (const key of ['created_at', 'id']) if (!query.sortKeys.includes(key)) order.push([key, first]);
  return { ok: true, value: order };
}

function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  // NULL sorts first in ascending order, as in MySQL
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  const left = typeof a === 'string' ? a : JSON.stringify(a);
  const right = typeof b === 'string' ? b : JSON.stringify(b);
  return left < right ? -1 : left > right ? 1 : 0;
}

function comparator(order: ReadonlyArray<[string, 'asc' | 'desc']>): (a: Row, b: Row) => number {
  return (a, b) => {
    for (const [key, direction] of order) {
      const difference = compareValues(a[key], b[key]);
      if (difference !== 0) return direction === 'asc' ? difference : -difference;
    }
    return 0;
  };
}

/**
 * One page of `rows` (already filtered) for `query`. `all` is every live row of the kind, where the
 * marker is looked up (it need not match the filters).
 */
export function pageOf<R extends Row>(
  rows: ReadonlyArray<R>,
  all: ReadonlyArray<R>,
  query: ListQuery,
  columns: ReadonlyArray<string>,
): Parsed<R[]> {
  if (query.limit === 0) return { ok: true, value: [] };
  const order = sortOrder(query);
  if (!order.ok) return order;
  let marker: R | undefined;
  if (query.marker !== null) {
    const markerText = query.marker.trim();
    marker = /^\d+$/.test(markerText) ? all.find((row) => row.id === Number(markerText)) : undefined;
    if (marker === undefined) return invalid(`Marker ${query.marker} could not be found.`);
  }
  const unknown = order.value.find(([key]) => !columns.includes(key));
  if (unknown !== undefined) return invalid(`Sort key supplied is invalid: ${unknown[0]}`);
  const compare = comparator(order.value);
  const sorted = [...rows].sort(compare);
  const after = marker === undefined ? sorted : sorted.filter((row) => compare(row, marker) > 0);
  return { ok: true, value: after.slice(0, query.limit) };
}

/** oslo's strict `bool_from_string` for a filter value, or Masakari's 400 message naming the filter. */
export function strictBoolean(text: string, name: string): Parsed<boolean> {
  const lowered = text.trim().toLowerCase();
  if (['1', 't', 'true', 'on', 'y', 'yes'].includes(lowered)) return { ok: true, value: true };
  if (['0', 'f', 'false', 'off', 'n', 'no'].includes(lowered)) return { ok: true, value: false };
  const acceptable = ['0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes']
    .map((value) => `'${value}'`)
    .join(', ');
  return invalid(
    `Invalid value for ${name}: Unrecognized value '${text}', acceptable values are: ${acceptable}`,
  );
}
