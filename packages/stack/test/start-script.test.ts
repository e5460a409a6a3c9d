// scripts/start.mjs (what `npm start` runs) on a scratch copy of the repository's layout: a turbo and a
// launcher that only print, and brokers that only accept connections. Nothing is built or installed.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PACKAGE_REPOSITORY_ROOT } from '../src/index.ts';

/** A scratch repository: start.mjs and what it reads, a turbo that prints to stdout, a launcher that prints JSON. */
function scratchRepository(): string {
  const root = mkdtempSync(join(tmpdir(), 'lifeguard-start-script-'));
  for (const directory of ['scripts', 'packages/runtime', 'packages/stack/dist', 'node_modules/.bin'])
    mkdirSync(join(root, directory), { recursive: true });
  for (const file of [
    'scripts/start.mjs',
    'scripts/bin-modes.mjs',
    'packages/runtime/broker-start-hints.json',
  ])
    copyFileSync(join(PACKAGE_REPOSITORY_ROOT, file), join(root, file));
  writeFileSync(join(root, 'packages/runtime/package.json'), '{"name": "@lifeguard/runtime"}\n');
  writeFileSync(join(root, 'packages/stack/package.json'), '{"name": "@lifeguard/stack"}\n');
  // What turbo prints while it builds: task lines and a summary, on its standard output.
  const turbo = join(root, 'node_modules/.bin/turbo');
  writeFileSync(
    turbo,
    '#!/bin/sh\necho "@lifeguard/runtime:build: cache miss, executing"\necho " Tasks:    1 successful, 1 total"\n',
  );
  chmodSync(turbo, 0o755);
  writeFileSync(
    join(root, 'packages/stack/dist/main.js'),
    'process.stdout.write(JSON.stringify({ level: 30, msg: "launcher", argv: process.argv.slice(2) }) + "\\n");\n',
  );
  return root;
}

function listen(): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer((socket) => socket.destroy());
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

describe('npm start (scripts/start.mjs)', () => {
  let root: string;
  const brokers: Server[] = [];

  before(async () => {
    root = scratchRepository();
    brokers.push(await listen(), await listen());
  });

  after(() => {
    for (const broker of brokers) broker.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('writes everything before the launcher (its notes, the build) to stderr: with --log-format json, stdout is JSON lines only', async () => {
    const [amqp, redis] = brokers.map((broker) => (broker.address() as { port: number }).port);
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done) =>
      execFile(
        process.execPath,
        [join(root, 'scripts/start.mjs'), '--log-format', 'json'],
        {
          cwd: root,
          env: {
            PATH: process.env.PATH,
            HOME: process.env.HOME,
            LIFEGUARD_AMQP_URL: `amqp://guest:guest@127.0.0.1:${amqp}/`,
            LIFEGUARD_REDIS_URL: `redis://127.0.0.1:${redis}/0`,
          },
          timeout: 60_000,
        },
        (error, stdout, stderr) => done({ code: error ? (error.code as number) : 0, stdout, stderr }),
      ),
    );
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /^> turbo run build \(1 of 2 packages not built yet/m, 'its own note');
    assert.match(run.stderr, /cache miss, executing/, "turbo's lines");
    const lines = run.stdout.split('\n').filter((line) => line !== '');
    assert.deepEqual(
      lines.map((line) => JSON.parse(line)),
      [{ level: 30, msg: 'launcher', argv: ['--log-format', 'json'] }],
      'only the launcher writes to stdout',
    );
  });
});
