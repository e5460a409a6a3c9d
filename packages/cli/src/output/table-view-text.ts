import { cellText, type TableView, truncate } from '@lifeguard/operator-views';
import { renderTable } from './table.ts';

/**
 * A status table's view model as text (the console renders the same model as HTML): the columns'
 * titles as the header, each cell's text, cut to its column's `textWidth`.
 */
export function renderTableView(view: TableView): string {
  return renderTable(
    view.columns.map((column) => column.title),
    view.rows.map((row) =>
      row.cells.map((cell, index) => {
        const width = view.columns[index]?.textWidth;
        return width === undefined ? cellText(cell) : truncate(cellText(cell), width);
      }),
    ),
  );
}
