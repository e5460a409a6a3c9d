/**
 * A status table as a view model: built once from what was read, and rendered twice, as text by the
 * `lifeguard` command (packages/cli/src/output/table-view-text.ts) and as HTML by the console
 * (packages/console/src/pages/table-view-html.ts). A column added here appears in both.
 */

/** How the console marks a cell (a coloured badge); the command prints the text alone. */
export type CellTone = 'ok' | 'bad' | 'warn' | 'info' | 'muted';

/** One cell: the text both show, and how the console shows it. */
export interface TableCell {
  /** The cell's text; null or empty shows as `-`. */
  readonly text: string | number | boolean | null;
  /** The console shows the text as a badge of this tone. */
  readonly tone?: CellTone;
  /** The console's tooltip: the exact value behind a short text (the time behind `12.3 s ago`). */
  readonly hint?: string;
  /** The console shows the text as code (a message body). */
  readonly code?: boolean;
}

/** One column: its title, and how wide the command lets it grow. */
export interface TableColumn {
  readonly title: string;
  /** The command cuts a longer text to this many characters, ending with `…`; the console shows it whole. */
  readonly textWidth?: number;
}

/** One row: what it is about (the console adds its links and forms from it), and one cell per column. */
export interface TableRow<Subject> {
  readonly subject: Subject;
  readonly cells: ReadonlyArray<TableCell>;
}

/** One status table: its name, its columns, and its rows. */
export interface TableView<Subject = unknown> {
  /** The table's name, as the console's element id: `worker-kinds`, `dead-letters`, ... */
  readonly id: string;
  readonly columns: ReadonlyArray<TableColumn>;
  readonly rows: ReadonlyArray<TableRow<Subject>>;
}

/** A cell's text as both renderings show it: `-` for null or empty. */
export function cellText(cell: TableCell): string {
  return cell.text === null || cell.text === '' ? '-' : String(cell.text);
}

/** A plain cell of `text`, or a `-` for null or undefined. */
export function cell(text: TableCell['text'] | undefined, marks: Omit<TableCell, 'text'> = {}): TableCell {
  return { text: text ?? null, ...marks };
}
