// `npm start`: installs the dependencies when node_modules is missing, builds every package (turbo,
// cached: about a second when nothing changed), then runs the stack launcher
// (packages/stack/dist/main.js) in this process, so Ctrl-C and SIGTERM reach it directly.
// Arguments after `--` go to the launcher: npm start -- --evacuation-workers 3 (see -- --help).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
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
await import(pathToFileURL(join(root, 'packages', 'stack', 'dist', 'main.js')).href);
