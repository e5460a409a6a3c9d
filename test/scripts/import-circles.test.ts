// No file of a package's src imports another in a circle, `import type`, `export type ... from` and
// `import('...')` types included: in a circle neither module can be read, loaded or moved without the
// other, and a type shared by two modules belongs in a module of its own. The import graph is madge's,
// with type imports counted (detective-typescript's skipTypeImports off).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import madge from 'madge';

const root = resolve(import.meta.dirname, '../..');

/** madge as the check runs it: TypeScript files, the repository's compiler options, type imports counted. */
const MADGE_CONFIG: madge.MadgeConfig = {
  fileExtensions: ['ts'],
  tsConfig: join(root, 'tsconfig.json'),
  detectiveOptions: { ts: { skipTypeImports: false }, es6: { skipTypeImports: false } },
};

/**
 * The import circles among the files under `directory` (each as its files, relative to it), and the
 * relative imports madge could not resolve (a circle through one of those would go unseen).
 */
async function importCircles(directory: string): Promise<{ circles: string[][]; unresolved: string[] }> {
  const graph = await madge(directory, MADGE_CONFIG);
  return {
    circles: graph.circular(),
    unresolved: graph.warnings().skipped.filter((specifier) => specifier.startsWith('.')),
  };
}

/** A circle as `a.ts → b.ts → a.ts`. */
const describeCircle = (circle: ReadonlyArray<string>) => [...circle, circle[0]].join(' → ');

/** Every package's `src` folder, relative to the repository. */
const packageSources = readdirSync(join(root, 'packages'))
  .map((name) => join('packages', name, 'src'))
  .filter((source) => existsSync(join(root, source)))
  .sort();

describe('import circles', () => {
  for (const source of packageSources) {
    it(`${source}: no file imports another in a circle`, async () => {
      const { circles, unresolved } = await importCircles(join(root, source));
      assert.deepEqual(unresolved, [], `${source}: relative imports not resolved`);
      assert.equal(
        circles.length,
        0,
        `${source} has import circles (move what both sides use to a module of its own):\n  ${circles
          .map(describeCircle)
          .join('\n  ')}`,
      );
    });
  }

  it('the check sees circles made of type imports only, type re-exports and import() types', async () => {
    const fixtures = mkdtempSync(join(tmpdir(), 'lifeguard-import-circles-'));
    const files: Record<string, string> = {
      'type-import/a.ts': "import type { B } from './b.ts';\nexport interface A { b: B }\n",
      'type-import/b.ts': "import type { A } from './a.ts';\nexport interface B { a?: A }\n",
      're-export/c.ts': "export type { D } from './d.ts';\nexport interface C { n: number }\n",
      're-export/d.ts': "import { type C } from './c.ts';\nexport interface D { c?: C }\n",
      'import-type/e.ts': "export type E = import('./f.ts').F;\n",
      'import-type/f.ts': "import type { E } from './e.ts';\nexport type F = { e?: E };\n",
      'no-circle/g.ts': "import type { H } from './h.ts';\nexport type G = H[];\n",
      'no-circle/h.ts': 'export type H = string;\n',
    };
    try {
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(fixtures, path)), { recursive: true });
        writeFileSync(join(fixtures, path), text);
      }
      const circlesIn = async (folder: string) => (await importCircles(join(fixtures, folder))).circles;
      assert.deepEqual(await circlesIn('type-import'), [['a.ts', 'b.ts']]);
      assert.deepEqual(await circlesIn('re-export'), [['c.ts', 'd.ts']]);
      assert.deepEqual(await circlesIn('import-type'), [['e.ts', 'f.ts']]);
      assert.deepEqual(await circlesIn('no-circle'), []);
    } finally {
      rmSync(fixtures, { recursive: true, force: true });
    }
  });
});
