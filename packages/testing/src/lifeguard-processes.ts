// How tests start lifeguard's own programs (a worker's main, the CLI, the launcher) as processes of
// their own: from the compiled `dist/<main>.js` that `npm run build` writes, or from the TypeScript
// sources through tsx. npm test writes their JavaScript first and says `dist`: a compiled worker starts on
// about half the CPU of one compiled at start by tsx, and the suite starts hundreds of them.
import { join, resolve } from 'node:path';

const repositoryRoot = resolve(import.meta.dirname, '..', '..', '..');

export type LifeguardProcessRun = 'dist' | 'source';

/** `LIFEGUARD_TEST_PROCESSES`: `dist` (set by npm test once it wrote the JavaScript) or `source` (the default). */
export function lifeguardProcessRun(env: NodeJS.ProcessEnv = process.env): LifeguardProcessRun {
  const value = env.LIFEGUARD_TEST_PROCESSES ?? 'source';
  if (value !== 'dist' && value !== 'source') {
    throw new Error(`LIFEGUARD_TEST_PROCESSES must be "dist" or "source" (got "${value}")`);
  }
  return value;
}

/**
 * The node arguments that run entry point `main` of packages/<packageName>: `dist/<main>.js`, or
 * `src/<main>.ts` through tsx with the @lifeguard/source export condition. The process's
 * environment must not carry npm test's NODE_OPTIONS (tsx and the source condition): see
 * `withoutNodeOptions`.
 */
export function lifeguardEntryPoint(packageName: string, main = 'main'): string[] {
  const directory = join(repositoryRoot, 'packages', packageName);
  return lifeguardProcessRun() === 'dist'
    ? [join(directory, 'dist', `${main}.js`)]
    : ['--import', 'tsx', '--conditions=@lifeguard/source', join(directory, 'src', `${main}.ts`)];
}

/** `env` without NODE_OPTIONS, which would load tsx and the sources into a compiled program. */
export function withoutNodeOptions(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _ignored, ...rest } = env;
  return rest;
}
