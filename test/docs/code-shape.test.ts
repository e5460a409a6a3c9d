// The project's shape rule: no file in packages/*/src over 400 lines, no function over 80 lines. This
// test keeps it so: it reads every source file with the TypeScript compiler API and names each offender
// with file:line and its length. A function counts from the line of its first token (its name, modifiers
// or parameters, not the docstring above it) to the line of its closing brace; every function-like node
// with a body counts: declarations, methods, accessors, constructors, function expressions and arrow
// functions, nested ones included.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';

const root = join(import.meta.dirname, '..', '..');
const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 80;

/**
 * Functions allowed over MAX_FUNCTION_LINES, keyed by `path:functionName` (path from the repository
 * root; an anonymous function is named `(anonymous)`), each with the reason a reviewer accepted.
 * An entry that matches no offender fails the test, so the list cannot outlive its reason.
 */
const FUNCTION_EXCEPTIONS: ReadonlyMap<string, string> = new Map();

/** Files allowed over MAX_FILE_LINES, keyed by path from the repository root, each with its reason. */
const FILE_EXCEPTIONS: ReadonlyMap<string, string> = new Map();

function sourceFiles(directory: string, found: string[] = []): string[] {
  for (const name of readdirSync(directory)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const path = join(directory, name);
    if (statSync(path).isDirectory()) sourceFiles(path, found);
    else if (/\.(ts|tsx|mts|cts|mjs|js)$/.test(name) && !name.endsWith('.d.ts')) found.push(path);
  }
  return found;
}

const packages = join(root, 'packages');
const files = readdirSync(packages)
  .map((name) => join(packages, name, 'src'))
  .filter((source) => statSync(source, { throwIfNoEntry: false })?.isDirectory())
  .flatMap((source) => sourceFiles(source))
  .sort();

interface Offender {
  /** `path:functionName`, the key of FUNCTION_EXCEPTIONS. */
  readonly key: string;
  /** `path:line name (N lines)`, what the failure message shows. */
  readonly text: string;
}

/** The name a reader would look for: declared name, or the variable, property or call it is bound to. */
function functionName(node: ts.FunctionLikeDeclaration, sourceFile: ts.SourceFile): string {
  if (node.name) return node.name.getText(sourceFile);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name) {
    return parent.name.getText(sourceFile);
  }
  if (ts.isPropertyDeclaration(parent)) return parent.name.getText(sourceFile);
  return '(anonymous)';
}

function lineOf(sourceFile: ts.SourceFile, position: number): number {
  return sourceFile.getLineAndCharacterOfPosition(position).line + 1;
}

/** Every function-like node with a body in the file that is longer than MAX_FUNCTION_LINES. */
function longFunctions(path: string, text: string): Offender[] {
  const sourceFile = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const relativePath = relative(root, path);
  const found: Offender[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = lineOf(sourceFile, node.getStart(sourceFile));
      const lines = lineOf(sourceFile, node.getEnd()) - start + 1;
      if (lines > MAX_FUNCTION_LINES) {
        const name = functionName(node as ts.FunctionLikeDeclaration, sourceFile);
        found.push({
          key: `${relativePath}:${name}`,
          text: `${relativePath}:${start} ${name} (${lines} lines)`,
        });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return found;
}

describe('code shape of packages/*/src', () => {
  it('finds the source files', () => {
    assert.ok(files.length > 100, `found ${files.length} files`);
  });

  it(`has no file over ${MAX_FILE_LINES} lines`, () => {
    const long = files
      .map((path) => ({ path: relative(root, path), lines: readFileSync(path, 'utf8').split('\n').length }))
      // A file ending in a newline has an empty last element: it is not a line.
      .map(({ path, lines }) => ({ path, lines: lines - 1 }))
      .filter(({ path, lines }) => lines > MAX_FILE_LINES && !FILE_EXCEPTIONS.has(path))
      .map(({ path, lines }) => `${path} (${lines} lines)`);
    assert.deepEqual(long, [], `split these files into modules of one job each`);
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines`, () => {
    const offenders = files.flatMap((path) => longFunctions(path, readFileSync(path, 'utf8')));
    const unexcused = offenders.filter((offender) => !FUNCTION_EXCEPTIONS.has(offender.key));
    assert.deepEqual(
      unexcused.map((offender) => offender.text),
      [],
      'split these functions into named pieces with one job each',
    );
  });

  it('lists only exceptions that still match an offender', () => {
    const offenders = new Set(
      files
        .flatMap((path) => longFunctions(path, readFileSync(path, 'utf8')))
        .map((offender) => offender.key),
    );
    const stale = [...FUNCTION_EXCEPTIONS.keys()].filter((key) => !offenders.has(key));
    const staleFiles = [...FILE_EXCEPTIONS.keys()].filter(
      (path) => readFileSync(join(root, path), 'utf8').split('\n').length - 1 <= MAX_FILE_LINES,
    );
    assert.deepEqual([...stale, ...staleFiles], [], 'remove exceptions whose offender is gone');
  });
});
