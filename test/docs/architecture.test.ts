// docs/architecture.md maps every rule to the file that decides it and the tests that prove it; these
// tests keep the map from rotting: every path it names exists, every rule of the two specs and every
// safety rule has a row, every row names at least one test, and every file a row says decides a rule
// still exports the symbols named after it.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const root = join(import.meta.dirname, '..', '..');
const architecture = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');

/** Table rows of the map: lines starting with `|`, without the header and separator rows. */
const rows = architecture
  .split('\n')
  .filter((line) => line.startsWith('|') && !/^\|\s*-/.test(line) && !/^\|\s*rule\s*\|/.test(line));

/** The cells of a table line, trimmed, without the outer pipes. */
const cellsOf = (line: string): string[] =>
  line
    .split('|')
    .slice(1, -1)
    .map((cell) => cell.trim());

/** Each table row with its rule and its "decided in" cell, found by the header of its table. */
function decidedInCells(): Array<{ rule: string; decidedIn: string }> {
  const found: Array<{ rule: string; decidedIn: string }> = [];
  let column = -1;
  for (const line of architecture.split('\n')) {
    if (!line.startsWith('|')) {
      column = -1;
      continue;
    }
    if (/^\|\s*-/.test(line)) continue;
    const cells = cellsOf(line);
    if (/^\|\s*rule\s*\|/.test(line)) {
      column = cells.indexOf('decided in');
      continue;
    }
    assert.ok(column > 0, `a table without a "decided in" column: ${line.slice(0, 80)}`);
    const rule = cells[0]!.replace(/\[([^\]]+)\]\([^)]*\)/g, '$1');
    found.push({ rule, decidedIn: cells[column]! });
  }
  return found;
}

/** The text inside the parentheses that open `text` (after blanks), nested ones included; null when none. */
function parenthesesAtStart(text: string): string | null {
  const start = /^\s*\(/.exec(text);
  if (!start) return null;
  let depth = 0;
  for (let index = start[0].length - 1; index < text.length; index++) {
    if (text[index] === '(') depth++;
    else if (text[index] === ')' && --depth === 0) return text.slice(start[0].length, index);
  }
  return null;
}

/**
 * Each path of a "decided in" cell with its symbols: the single names in backticks in the parentheses
 * right after the path (other backticked text there, such as a command, is not a symbol).
 */
function pathsAndSymbols(cell: string): Array<{ path: string; symbols: string[] }> {
  return [...cell.matchAll(/`((?:packages|test|bench|scripts)\/[^`\s]+\.ts)`/g)].map((match) => {
    const inside = parenthesesAtStart(cell.slice(match.index + match[0].length)) ?? '';
    const symbols = [...inside.matchAll(/`([^`]+)`/g)]
      .map((name) => name[1]!)
      .filter((name) => /^[A-Za-z_]\w*$/.test(name));
    return { path: match[1]!, symbols };
  });
}

/**
 * Whether a module's text exports `name`: a declaration (`export [async] function|const|class|
 * interface|type|enum name`) or an `export { ... }` list, re-exports and `as` renames included.
 */
function exportsName(source: string, name: string): boolean {
  const declaration = new RegExp(
    `^export (?:async )?(?:function\\*?|const|let|class|abstract class|interface|type|enum) ${name}\\b`,
    'm',
  );
  if (declaration.test(source)) return true;
  // `a`, `type a`, `a as b`: the name the module exports is the last word.
  const exportedName = (entry: string) => entry.trim().split(/\s+/).pop();
  return [...source.matchAll(/^export (?:type )?\{([^}]*)\}/gm)].some((list) =>
    list[1]!.split(',').some((entry) => exportedName(entry) === name),
  );
}

describe('docs/architecture.md', () => {
  it('names only paths that exist in the repository', () => {
    const paths = [...architecture.matchAll(/`((?:packages|test|bench|scripts|docs)\/[^`\s]+)`/g)].map(
      (match) => match[1]!,
    );
    assert.ok(paths.length > 100, `found ${paths.length} paths`);
    const missing = [...new Set(paths)].filter((path) => !existsSync(join(root, path)));
    assert.deepEqual(missing, [], 'update docs/architecture.md where a file moved');
  });

  it('has a row for every rule of the two specs and every safety rule', () => {
    const rules = [
      'POLL',
      'DELTA',
      'THRESHOLD',
      'evacuable tags',
      'DISABLED',
      'kdump',
      'SMART_EVACUATION',
      'ORCHESTRATED_RESTART',
      'reserved hosts',
      'LEAVE_DISABLED',
      'FORCE_ENABLE',
      'DHCP block rule',
      'L2 block rule',
      ...[1, 2, 3, 4, 5, 6, 7].map((rule) => `safety-rules.md#rule-${rule}-`),
    ];
    const missing = rules.filter((rule) => !rows.some((row) => row.split('|')[1]!.includes(rule)));
    assert.deepEqual(missing, []);
  });

  it('names at least one test for every rule', () => {
    assert.ok(rows.length > 40, `found ${rows.length} rows`);
    const untested = rows
      .filter((row) => !/`[^`]+\.test\.ts`/.test(row))
      .map((row) => row.split('|')[1]!.trim());
    assert.deepEqual(untested, []);
  });

  it('names, for every file a rule is decided in, the exported symbols that decide it', () => {
    const problems: string[] = [];
    let checked = 0;
    for (const { rule, decidedIn } of decidedInCells()) {
      if (decidedIn === '') continue;
      const pairs = pathsAndSymbols(decidedIn);
      if (pairs.length === 0) problems.push(`${rule}: "decided in" names no file`);
      if (pairs.every(({ symbols }) => symbols.length === 0))
        problems.push(`${rule}: "decided in" names no symbol`);
      for (const { path, symbols } of pairs) {
        if (symbols.length === 0) {
          problems.push(`${rule}: ${path} is given no symbol in backticks in the parentheses after it`);
          continue;
        }
        if (!existsSync(join(root, path))) continue; // reported by the test of paths
        const source = readFileSync(join(root, path), 'utf8');
        for (const symbol of symbols) {
          checked++;
          if (!exportsName(source, symbol)) problems.push(`${rule}: ${path} does not export ${symbol}`);
        }
      }
    }
    assert.deepEqual(problems, [], 'update the symbols of docs/architecture.md where a symbol was renamed');
    assert.ok(checked > 100, `checked ${checked} symbols`);
  });
});
