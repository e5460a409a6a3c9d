// Renders the rows the fault tests appended (JSON lines, see fault-table.ts) as one Markdown table,
// in the order the faults ran. Used by scripts/run-tests.mjs after `npm run test:faults`.
import { existsSync, readFileSync } from 'node:fs';

const COLUMNS = [
  ['fault', 'fault'],
  ['inFlight', 'in flight'],
  ['eventsLost', 'events lost'],
  ['duplicateEffects', 'duplicate effects'],
  ['secondsToResume', 'time to resume (s)'],
  ['outcome', 'what the operator sees'],
];

/** The table of `file`'s rows, or a line saying no fault recorded a row. */
export function renderFaultTable(file) {
  const rows =
    file && existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line))
      : [];
  if (rows.length === 0) return 'fault suite: no fault recorded a row';
  const cell = (row, key) => {
    const value = row[key];
    if (value === null || value === undefined) return '-';
    if (typeof value === 'number' && key === 'secondsToResume') return value.toFixed(1);
    return String(value).replaceAll('|', '\\|');
  };
  const lines = [
    `| ${COLUMNS.map(([, title]) => title).join(' | ')} |`,
    `| ${COLUMNS.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${COLUMNS.map(([key]) => cell(row, key)).join(' | ')} |`),
  ];
  const lost = rows.reduce((sum, row) => sum + row.eventsLost, 0);
  const duplicates = rows.reduce((sum, row) => sum + row.duplicateEffects, 0);
  lines.push('', `${rows.length} faults: ${lost} events lost, ${duplicates} duplicate effects`);
  return lines.join('\n');
}
