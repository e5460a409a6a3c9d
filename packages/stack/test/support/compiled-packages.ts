import { lifeguardProcessRun } from '@lifeguard/testing';
import { buildPackages, PACKAGE_REPOSITORY_ROOT } from '../../src/index.ts';

/**
 * Makes sure every package's dist/ is there for a test that starts the compiled workers. Under
 * `npm test` (LIFEGUARD_TEST_PROCESSES=dist) the runner wrote them before the first file: building
 * again would rewrite them under the workers other files are starting at that moment (turbo replays a
 * cached build by deleting and restoring dist/, and a starting worker then misses a module). Run on
 * its own (`node --test <file>`), the file builds them (turbo run build, cached).
 */
export async function ensureCompiledPackages(repositoryRoot = PACKAGE_REPOSITORY_ROOT): Promise<void> {
  if (lifeguardProcessRun() === 'dist') return;
  await buildPackages(repositoryRoot);
}
