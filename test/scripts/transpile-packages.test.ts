// The packages' JavaScript for the test run (scripts/transpile-packages.mjs): what it compiles, the
// ES modules and source maps it writes, and a syntax error named with its file and line.
import assert from 'node:assert/strict';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { compiledSource, transpilePackages } from '../../scripts/transpile-packages.mjs';

const repositoryRoot = resolve(import.meta.dirname, '../..');

/** A checkout holding the repository's tsconfig.json and the given files. */
function checkout(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'transpile-packages-'));
  copyFileSync(join(repositoryRoot, 'tsconfig.json'), join(root, 'tsconfig.json'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('transpilePackages', () => {
  const roots: string[] = [];
  after(() => {
    for (const root of roots) rmSync(root, { recursive: true, force: true });
  });

  it('compiles src/**/*.ts but not tests nor declaration files', () => {
    const cases: [string, boolean][] = [
      ['packages/a/src/index.ts', true],
      ['packages/a/src/deep/inner.ts', true],
      ['packages/a/src/index.test.ts', false],
      ['packages/a/src/types.d.ts', false],
      ['packages/a/src/data.json', false],
    ];
    for (const [path, compiled] of cases) assert.equal(compiledSource(path), compiled, path);
  });

  it("writes each package's dist/ as ES modules, relative .ts imports as .js, with tsc's source maps", () => {
    const root = checkout({
      'packages/alpha/src/index.ts':
        "import { twice } from './deep/twice.ts';\nexport const four: number = twice(2);\n",
      'packages/alpha/src/deep/twice.ts':
        'export function twice(value: number): number {\n  return value * 2;\n}\n',
      'packages/alpha/src/index.test.ts': 'throw new Error("a test is not compiled");\n',
      'packages/beta/src/main.ts':
        "import type { Server } from 'node:http';\nexport type Kept = Server;\nexport const ready = true;\n",
      'packages/no-source/README.md': 'a folder without src/\n',
    });
    roots.push(root);
    const { files, errors } = transpilePackages(root);
    assert.deepEqual(errors, []);
    assert.equal(files, 3);
    const index = readFileSync(join(root, 'packages/alpha/dist/index.js'), 'utf8');
    assert.match(index, /^import \{ twice \} from "\.\/deep\/twice\.js";$/m);
    assert.match(index, /^export const four = twice\(2\);$/m);
    assert.match(index, /\/\/# sourceMappingURL=index\.js\.map$/);
    assert.equal(existsSync(join(root, 'packages/alpha/dist/index.test.js')), false);
    const map = JSON.parse(readFileSync(join(root, 'packages/alpha/dist/deep/twice.js.map'), 'utf8'));
    assert.deepEqual([map.file, map.sources], ['twice.js', ['../../src/deep/twice.ts']]);
    const main = readFileSync(join(root, 'packages/beta/dist/main.js'), 'utf8');
    assert.doesNotMatch(main, /node:http/, 'a type-only import leaves nothing');
    assert.match(main, /^export const ready = true;$/m);
  });

  it('names a syntax error with its file, line and column and writes nothing for that file', () => {
    const root = checkout({
      'packages/alpha/src/good.ts': 'export const good = 1;\n',
      'packages/alpha/src/broken.ts': 'export const fine = 1;\nexport const broken = (;\n',
    });
    roots.push(root);
    const { files, errors } = transpilePackages(root);
    assert.equal(files, 1);
    assert.equal(errors.length, 1);
    assert.match(errors[0]!, /^packages\/alpha\/src\/broken\.ts:2:\d+ Expression expected\.$/);
    assert.equal(existsSync(join(root, 'packages/alpha/dist/broken.js')), false);
    assert.equal(existsSync(join(root, 'packages/alpha/dist/good.js')), true);
  });
});
