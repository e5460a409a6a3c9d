import Table from 'cli-table3';

/** A cell as a table shows it; null and undefined show as `-`. */
export type CellText = string | number | boolean | null | undefined;

const NO_BORDERS = {
  top: '',
  'top-mid': '',
  'top-left': '',
  'top-right': '',
  bottom: '',
  'bottom-mid': '',
  'bottom-left': '',
  'bottom-right': '',
  left: '',
  'left-mid': '',
  mid: '',
  'mid-mid': '',
  right: '',
  'right-mid': '',
  middle: '  ',
};

function cell(value: CellText): string {
  if (value === null || value === undefined || value === '') return '-';
  return String(value);
}

/**
 * Renders rows as a borderless table with an upper-case header (as `kubectl get`), columns two spaces
 * apart, no colours, trailing spaces trimmed: readable on a terminal and stable for `grep`/`awk`.
 * An empty `rows` gives only the header.
 */
export function renderTable(
  head: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<CellText>>,
): string {
  const table = new Table({
    head: head.map((title) => title.toUpperCase()),
    chars: NO_BORDERS,
    style: { 'padding-left': 0, 'padding-right': 0, head: [], border: [], compact: true },
  });
  for (const row of rows) table.push(row.map(cell));
  return table
    .toString()
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line.length > 0)
    .join('\n');
}

/** Renders `label: value` lines with the labels padded to one width (a record's fields). */
export function renderFields(fields: ReadonlyArray<readonly [string, CellText]>): string {
  const width = Math.max(0, ...fields.map(([label]) => label.length));
  return fields
    .map(([label, value]) => `${`${label}:`.padEnd(width + 2)}${cell(value)}`.trimEnd())
    .join('\n');
}
