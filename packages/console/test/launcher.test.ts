// `npm start` (the launcher, packages/stack/dist/main.js) starts the console next to the workers and
// prints its URL; the console it started reads that stack, and ends with it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { PACKAGE_REPOSITORY_ROOT } from '@lifeguard/stack';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  REDIS_URL,
  randomKeyPrefix,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import { ensureCompiledPackages } from '../../stack/test/support/compiled-packages.ts';

/** A port free right now (the system's choice, released at once). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

describe('npm start and the console', { timeout: 300_000 }, () => {
  it('starts the console with the workers, prints its URL, and the console shows that stack; SIGTERM ends both', async () => {
    await ensureCompiledPackages();
    const vhost = await createTestVhost('console-launcher');
    const redis = testRedis();
    const keyPrefix = randomKeyPrefix('console-launcher');
    const stateDirectory = mkdtempSync(join(tmpdir(), 'lifeguard-console-launcher-'));
    const consolePort = await freePort();
    const env: NodeJS.ProcessEnv = {};
    for (const [name, value] of Object.entries(process.env)) {
      if (!name.startsWith('OS_') && !name.startsWith('LIFEGUARD_') && name !== 'NODE_OPTIONS')
        env[name] = value;
    }
    const child = spawn(process.execPath, [join('packages', 'stack', 'dist', 'main.js')], {
      cwd: PACKAGE_REPOSITORY_ROOT,
      env: {
        ...env,
        LIFEGUARD_AMQP_URL: vhost.url,
        LIFEGUARD_REDIS_URL: REDIS_URL,
        LIFEGUARD_REDIS_KEY_PREFIX: keyPrefix,
        LIFEGUARD_STACK_STATE_DIRECTORY: stateDirectory,
        LIFEGUARD_STACK_HTTP_PORT_BASE: '0',
        LIFEGUARD_STACK_CLOUD_SIM_PORT: '0',
        LIFEGUARD_STACK_REDFISH_PORT: '0',
        LIFEGUARD_STACK_CONSOLE_PORT: String(consolePort),
        LIFEGUARD_STACK_LOG_FORMAT: 'json',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      const url = `http://127.0.0.1:${consolePort}/`;
      await waitFor(
        'the console URL printed',
        () => {
          if (child.exitCode !== null) throw new Error(`the launcher exited ${child.exitCode}: ${stderr}`);
          // --log-format json: the banner and the console's URL go to stderr.
          return stderr.includes(`Console: ${url}`);
        },
        180_000,
        200,
      );
      const queues = await (await fetch(`${url}queues`)).text();
      for (const kind of ['node-monitor', 'fencing-worker', 'evacuation-worker']) {
        assert.match(
          queues,
          new RegExp(`<td>${kind}</td><td>1</td>`),
          `${kind} is live on the console's page`,
        );
      }
      const fleet = await (await fetch(url)).text();
      assert.match(fleet, /compute-01/, "the simulated cloud's hosts");
      assert.match(fleet, /read-only/, 'read-only without LIFEGUARD_CONSOLE_OPERATOR_TOKEN');
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
      await assert.rejects(fetch(`${url}healthz`), 'the console ended with the launcher');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
      await deleteKeysWithPrefix(redis, keyPrefix);
      redis.disconnect();
      await vhost.delete();
      rmSync(stateDirectory, { recursive: true, force: true });
    }
  });
});
