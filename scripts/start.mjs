// `npm start`: installs the dependencies when node_modules is missing, builds every package (turbo,
// cached: about a second when nothing changed), links the workspace commands (`npx lifeguard`: npm
// skips a bin whose dist file did not exist yet at install time), then runs the stack launcher
// (packages/stack/dist/main.js) in this process, so Ctrl-C and SIGTERM reach it directly.
// Arguments after `--` go to the launcher: npm start -- --evacuation-workers 3 (see -- --help).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(import.meta.dirname, '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const run = (command, args) => {
  const result = spawnSync(command, args, {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
};

if (!existsSync(join(root, 'node_modules', '.bin', 'turbo'))) {
  console.log('> npm install (node_modules is missing)');
  run(npm, ['install', '--no-audit', '--no-fund']);
}
console.log('> turbo run build (cached)');
run(join(root, 'node_modules', '.bin', 'turbo'), ['run', 'build', '--output-logs=errors-only']);
const unlinked = readdirSync(join(root, 'packages')).flatMap((name) => {
  const manifest = join(root, 'packages', name, 'package.json');
  if (!existsSync(manifest)) return [];
  const bin = JSON.parse(readFileSync(manifest, 'utf8')).bin ?? {};
  return Object.keys(bin).filter((command) => !existsSync(join(root, 'node_modules', '.bin', command)));
});
if (unlinked.length > 0) {
  console.log(`> npm rebuild --ignore-scripts (links ${unlinked.join(', ')})`);
  run(npm, ['rebuild', '--ignore-scripts']);
}
await import(pathToFileURL(join(root, 'packages', 'stack', 'dist', 'main.js')).href);
