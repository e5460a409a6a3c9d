// The packages' JavaScript for the test run, from TypeScript's own emitter without a type check:
// each packages/*/src/**/*.ts (tests and declaration files left out) becomes packages/*/dist/**/*.js
// and its source map, file by file (ts.transpileModule: the code is written for isolatedModules), with
// the compiler options of tsconfig.json. The JavaScript is the same, byte for byte, as `tsc -p
// tsconfig.build.json` writes; what is left out is the type check and the .d.ts files, which the
// processes the tests start never read (`npm run typecheck` and `npm run build` are where types are
// checked). It takes seconds where the checked build takes a minute and more on 2 cores.
//
// As a command: `node scripts/transpile-packages.mjs` prints what it wrote, or the syntax errors
// with their file and line and exits 1.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { makeBinsExecutable } from './bin-modes.mjs';

/** Whether a file under src/ is compiled into dist/ (as tsconfig.build.json includes and excludes). */
export const compiledSource = (path) =>
  path.endsWith('.ts') && !path.endsWith('.d.ts') && !path.endsWith('.test.ts');

/** The compiler options tsconfig.json gives, for emitting one ES module at a time. */
export function transpileOptions(root) {
  const configPath = join(root, 'tsconfig.json');
  const { config, error } = ts.readConfigFile(configPath, ts.sys.readFile);
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
  const { options, errors } = ts.convertCompilerOptionsFromJson(config.compilerOptions ?? {}, root);
  if (errors.length > 0)
    throw new Error(errors.map((each) => ts.flattenDiagnosticMessageText(each.messageText, '\n')).join('\n'));
  // Every package is "type": "module": Node20 emits ES modules for them, as ESNext does file by file
  // (which wants a resolution other than Node16's; a single file resolves nothing).
  return {
    ...options,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    declaration: false,
    declarationMap: false,
    noEmit: false,
  };
}

function* sourcesUnder(directory) {
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) yield* sourcesUnder(path);
    else if (compiledSource(path)) yield path;
  }
}

/**
 * Writes dist/ of every package under `root`/packages; returns the number of files written and the
 * syntax errors found (`file:line:column message`), none written for a file that has one.
 */
export function transpilePackages(root) {
  const options = transpileOptions(root);
  const errors = [];
  let files = 0;
  for (const name of readdirSync(join(root, 'packages')).sort()) {
    const packageDirectory = join(root, 'packages', name);
    const source = join(packageDirectory, 'src');
    let paths;
    try {
      paths = [...sourcesUnder(source)];
    } catch {
      continue; // a folder without src/
    }
    for (const path of paths) {
      const target = join(packageDirectory, 'dist', relative(source, path)).replace(/\.ts$/, '.js');
      const output = ts.transpileModule(readFileSync(path, 'utf8'), {
        compilerOptions: options,
        fileName: path,
        reportDiagnostics: true,
      });
      const problems = (output.diagnostics ?? []).filter(
        (each) => each.category === ts.DiagnosticCategory.Error,
      );
      if (problems.length > 0) {
        for (const problem of problems) {
          const at =
            problem.file && problem.start !== undefined
              ? problem.file.getLineAndCharacterOfPosition(problem.start)
              : null;
          const where = at
            ? `${relative(root, path)}:${at.line + 1}:${at.character + 1}`
            : relative(root, path);
          errors.push(`${where} ${ts.flattenDiagnosticMessageText(problem.messageText, '\n')}`);
        }
        continue;
      }
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, output.outputText);
      if (output.sourceMapText) {
        // As tsc writes it: the source named from the map's own folder.
        const map = JSON.parse(output.sourceMapText);
        map.sources = [relative(dirname(target), path)];
        writeFileSync(`${target}.map`, JSON.stringify(map));
      }
      files++;
    }
  }
  makeBinsExecutable(root);
  return { files, errors };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const started = performance.now();
  const { files, errors } = transpilePackages(root);
  if (errors.length > 0) {
    for (const error of errors) console.error(error);
    console.error(
      `${errors.length} syntax error(s): the packages' JavaScript was not written for those files`,
    );
    process.exit(1);
  }
  console.log(`${files} files in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
