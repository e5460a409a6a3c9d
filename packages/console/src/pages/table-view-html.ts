import { cellText, type TableCell, type TableView } from '@lifeguard/operator-views';
import type { VNode } from 'preact';
import { html } from './html.ts';
import { badge, table } from './layout.ts';

/** A column of the console's own after a view model's columns: a write action's form, a link. */
export interface ConsoleColumn<Subject> {
  readonly title: string;
  /** The cell of a row, from what the row is about. */
  readonly cell: (subject: Subject) => VNode | string | null;
}

function cellHtml(cell: TableCell): VNode | string {
  const text = cellText(cell);
  const shown = cell.tone ? badge(text, cell.tone) : cell.code ? html`<code>${text}</code>` : text;
  return cell.hint ? html`<span title=${cell.hint}>${shown}</span>` : shown;
}

/**
 * A status table's view model as HTML (the `lifeguard` command renders the same model as text): the
 * columns' titles as the header, each cell's whole text, a toned cell as a badge, a code cell as code,
 * a hint as the cell's tooltip; then the console's own column, when given. The table's id is the
 * view model's.
 */
export function tableViewHtml<Subject>(view: TableView<Subject>, extra?: ConsoleColumn<Subject>): VNode {
  return table(
    [...view.columns.map((column) => column.title), ...(extra ? [extra.title] : [])],
    view.rows.map((row) => [...row.cells.map(cellHtml), ...(extra ? [extra.cell(row.subject)] : [])]),
    view.id,
  );
}
