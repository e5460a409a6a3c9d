// The workspace commands (`lifeguard-host-agent`, `lifeguard-evacuation-worker`, ...) are links to
// files under packages/*/dist. npm makes those files executable when it links them, but every later
// build writes them again without the execute bits (tsc and turbo's cache restore both write 644),
// and a command then fails with "Permission denied". This gives each bin target execute bits where it
// has read bits; `npm run build`, `npm start` and the test run's transpile call it after writing dist.
import { chmodSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Adds execute bits (where read bits are) to every `bin` target of packages/<name>/package.json under
 * `root` that exists; returns the paths changed.
 * @param {string} root the repository root
 * @returns {string[]}
 */
export function makeBinsExecutable(root) {
  const changed = [];
  for (const name of readdirSync(join(root, 'packages'))) {
    const manifest = join(root, 'packages', name, 'package.json');
    if (!existsSync(manifest)) continue;
    const bin = JSON.parse(readFileSync(manifest, 'utf8')).bin ?? {};
    const targets = typeof bin === 'string' ? [bin] : Object.values(bin);
    for (const target of targets) {
      const path = join(root, 'packages', name, target);
      if (!existsSync(path)) continue;
      const mode = statSync(path).mode & 0o777;
      const wanted = mode | ((mode & 0o444) >> 2);
      if (wanted === mode) continue;
      chmodSync(path, wanted);
      changed.push(path);
    }
  }
  return changed;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  makeBinsExecutable(resolve(import.meta.dirname, '..'));
}
