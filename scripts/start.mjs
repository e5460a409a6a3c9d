// `npm start`: checks that RabbitMQ and Redis answer at all, installs the dependencies when
// node_modules is missing, builds every package (turbo, cached: about a second when nothing
// changed), links the workspace commands (`npx lifeguard`: npm
// skips a bin whose dist file did not exist yet at install time), then runs the stack launcher
// (packages/stack/dist/main.js) in this process, so Ctrl-C and SIGTERM reach it directly.
// Arguments after `--` go to the launcher: npm start -- --evacuation-workers 3 (see -- --help).
// Everything printed before the launcher runs (npm install, turbo, these notes) goes to stderr:
// stdout is the launcher's alone, so `--log-format json` gives JSON lines only.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { makeBinsExecutable } from './bin-modes.mjs';

const root = resolve(import.meta.dirname, '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const run = (command, args) => {
  const result = spawnSync(command, args, {
    cwd: root,
    stdio: ['inherit', 2, 'inherit'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
};

// Before installing or building anything (minutes on a fresh clone): can RabbitMQ and Redis be
// reached at all? The launcher checks them fully (login, vhost) once built.
const reachable = (url) =>
  new Promise((resolveReachable) => {
    if (!URL.canParse(url)) return resolveReachable(null); // the launcher names the invalid variable
    const { hostname, port, protocol } = new URL(url);
    const defaultPort = { 'amqp:': 5672, 'amqps:': 5671, 'redis:': 6379, 'rediss:': 6379 }[protocol];
    const socket = connect({
      host: hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
      port: Number(port || defaultPort),
    });
    socket.setTimeout(3000);
    const done = (problem) => {
      socket.destroy();
      resolveReachable(problem);
    };
    socket.once('connect', () => done(null));
    socket.once('timeout', () => done('no answer within 3 s'));
    socket.once('error', (error) => done(error.code ?? error.message));
  });
// The same hints as the launcher's full check and every worker (packages/runtime/src/broker-start-hints.ts).
const hints = JSON.parse(readFileSync(join(root, 'packages', 'runtime', 'broker-start-hints.json'), 'utf8'));
const brokers = [
  ['RabbitMQ', process.env.LIFEGUARD_AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672/'],
  ...(process.env.LIFEGUARD_REDIS_SENTINELS
    ? []
    : [['Redis', process.env.LIFEGUARD_REDIS_URL || 'redis://127.0.0.1:6379/0']]),
];
let unreachable = 0;
for (const [broker, url] of brokers) {
  const problem = await reachable(url);
  if (problem === null) continue;
  unreachable++;
  const { host } = new URL(url);
  const hint = hints[broker];
  console.error(
    `${broker} is not reachable at ${host} (${problem}).\n` +
      `  Start it on this machine:  sudo systemctl start ${hint.systemdService} (without systemd, ${hint.withoutSystemd})\n` +
      `  or with Docker, in this checkout:  docker compose up -d ${hints.RabbitMQ.composeService} ${hints.Redis.composeService}\n` +
      `  or point ${hint.urlVariable} at a running ${broker}.`,
  );
}
if (unreachable > 0) process.exit(69);

if (!existsSync(join(root, 'node_modules', '.bin', 'turbo'))) {
  console.error('> npm install (node_modules is missing)');
  run(npm, ['install', '--no-audit', '--no-fund']);
}
// A package not built yet has no dist folder: on a fresh clone every package is built (minutes on two
// cores), and turbo then names each task as it starts, so the wait shows progress.
const packageNames = readdirSync(join(root, 'packages')).filter((name) =>
  existsSync(join(root, 'packages', name, 'package.json')),
);
const unbuilt = packageNames.filter((name) => !existsSync(join(root, 'packages', name, 'dist')));
if (unbuilt.length > 0) {
  console.error(
    `> turbo run build (${unbuilt.length} of ${packageNames.length} packages not built yet: a few minutes the first time)`,
  );
} else {
  console.error('> turbo run build (packages already built are reused)');
}
run(join(root, 'node_modules', '.bin', 'turbo'), [
  'run',
  'build',
  unbuilt.length > 0 ? '--output-logs=new-only' : '--output-logs=errors-only',
]);
makeBinsExecutable(root);
const unlinked = readdirSync(join(root, 'packages')).flatMap((name) => {
  const manifest = join(root, 'packages', name, 'package.json');
  if (!existsSync(manifest)) return [];
  const bin = JSON.parse(readFileSync(manifest, 'utf8')).bin ?? {};
  return Object.keys(bin).filter((command) => !existsSync(join(root, 'node_modules', '.bin', command)));
});
if (unlinked.length > 0) {
  console.error(`> npm rebuild --ignore-scripts (links ${unlinked.join(', ')})`);
  run(npm, ['rebuild', '--ignore-scripts']);
}
await import(pathToFileURL(join(root, 'packages', 'stack', 'dist', 'main.js')).href);
