// Code, tests and documents cite lifeguard's own documents as `docs/<file>.md#<anchor>`: these tests
// keep every such citation pointing at a document and a heading that exist, and keep citations of
// documents outside the repository from coming back.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';

const root = join(import.meta.dirname, '..', '..');

/** Directories and files whose text is searched for citations, relative to the repository root. */
const CITING_ROOTS = ['packages', 'test', 'bench', 'scripts', 'docs', 'README.md'];
const SKIPPED_DIRECTORIES = new Set(['node_modules', 'dist', 'fixtures', '.turbo']);
const TEXT_FILE = /\.(ts|mts|mjs|js|md|py|sh|json|yaml|yml|lua)$/;

function textFiles(path: string, found: string[] = []): string[] {
  if (!existsSync(path)) return found;
  if (!statSync(path).isDirectory()) {
    if (TEXT_FILE.test(path)) found.push(path);
    return found;
  }
  for (const name of readdirSync(path)) {
    if (!SKIPPED_DIRECTORIES.has(name)) textFiles(join(path, name), found);
  }
  return found;
}

/**
 * The anchor GitHub gives a heading: lower case, everything but letters, digits, spaces, `-` and `_`
 * dropped, spaces turned into `-`; a repeated heading gets `-1`, `-2`, ... appended.
 */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    const heading = inFence ? null : /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = heading[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    anchors.add(count === 0 ? base : `${base}-${count}`);
    seen.set(base, count + 1);
  }
  return anchors;
}

interface Citation {
  readonly from: string;
  readonly document: string;
  readonly anchor: string | null;
}

/** Every `docs/<file>.md[#anchor]` in a file, and in docs/ also relative links `(<file>.md#anchor)`. */
function citationsIn(path: string): Citation[] {
  const text = readFileSync(path, 'utf8');
  const from = relative(root, path);
  const citations: Citation[] = [];
  for (const match of text.matchAll(/\bdocs\/([A-Za-z0-9._-]+\.md)(?:#([A-Za-z0-9_-]+))?/g)) {
    citations.push({ from, document: match[1]!, anchor: match[2] ?? null });
  }
  if (from.startsWith('docs/')) {
    for (const match of text.matchAll(/\]\(([A-Za-z0-9._-]+\.md)?(?:#([A-Za-z0-9_-]+))?\)/g)) {
      if (!match[1] && !match[2]) continue;
      citations.push({ from, document: match[1] ?? from.slice('docs/'.length), anchor: match[2] ?? null });
    }
  }
  return citations;
}

const files = CITING_ROOTS.flatMap((name) => textFiles(join(root, name)));
const citations = files.flatMap(citationsIn);

describe('citations of docs/', () => {
  it('are found in code, tests and documents', () => {
    assert.ok(citations.length > 150, `found ${citations.length} citations`);
    assert.ok(citations.some((citation) => citation.from.startsWith('packages/')));
  });

  it('name documents that exist', () => {
    const missing = citations
      .filter((citation) => !existsSync(join(root, 'docs', citation.document)))
      .map((citation) => `${citation.from}: docs/${citation.document}`);
    assert.deepEqual([...new Set(missing)], []);
  });

  it('name headings that exist in the document', () => {
    const anchorsByDocument = new Map<string, Set<string>>();
    const broken: string[] = [];
    for (const citation of citations) {
      if (citation.anchor === null) continue;
      const path = join(root, 'docs', citation.document);
      if (!existsSync(path)) continue;
      let anchors = anchorsByDocument.get(citation.document);
      if (!anchors) {
        anchors = headingAnchors(readFileSync(path, 'utf8'));
        anchorsByDocument.set(citation.document, anchors);
      }
      if (!anchors.has(citation.anchor)) {
        broken.push(`${citation.from}: docs/${citation.document}#${citation.anchor}`);
      }
    }
    assert.deepEqual([...new Set(broken)], []);
  });

  it('name by its words a section that exists: `docs/<file>.md, "<title>"` quotes a heading or a paragraph lead', () => {
    const broken: string[] = [];
    for (const path of files) {
      const text = readFileSync(path, 'utf8');
      for (const match of text.matchAll(/\bdocs\/([A-Za-z0-9._-]+\.md), "([^"]+)"/g)) {
        const document = join(root, 'docs', match[1]!);
        if (!existsSync(document)) continue;
        const lines = readFileSync(document, 'utf8').split('\n');
        const title = match[2]!;
        const found = lines.some(
          (line) =>
            (/^#{1,6}\s/.test(line) && line.includes(title)) ||
            line.startsWith(`**${title}`) ||
            line.startsWith(`${title}`),
        );
        if (!found) broken.push(`${relative(root, path)}: docs/${match[1]}, "${title}"`);
      }
    }
    assert.deepEqual(broken, []);
  });

  it('give GitHub’s anchors to headings', () => {
    const anchors = headingAnchors(
      '# Title\n## Rule 1: fenced before evacuated\n```\n# not a heading\n```\n## SMART_EVACUATION\n## G7 aggregate `max_failures`\n## Title\n',
    );
    assert.deepEqual(
      [...anchors],
      ['title', 'rule-1-fenced-before-evacuated', 'smart_evacuation', 'g7-aggregate-max_failures', 'title-1'],
    );
  });
});

describe('documents outside the repository', () => {
  it('are cited nowhere: what code relies on is written under docs/', () => {
    const outside =
      /research\/|research [0-9A-Z]|research §|research section|research part|\(research\)|DESIGN\.md|DESIGN safety|DESIGN §|shared\/(harness|research|fixtures)|neutron-anchor/;
    const citing = files
      .filter((path) => !path.endsWith('doc-links.test.ts'))
      .flatMap((path) =>
        readFileSync(path, 'utf8')
          .split('\n')
          .map((line, index) => ({ path, line, number: index + 1 }))
          .filter(({ line }) => outside.test(line)),
      )
      .map(({ path, number, line }) => `${relative(root, path)}:${number}: ${line.trim()}`);
    assert.deepEqual(citing, []);
  });
});
