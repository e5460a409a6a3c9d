// The recovery benchmark in its smoke mode on the real-Nova harness (the test runner starts it for
// *.real-nova.test.ts files; the benchmark reuses it): one kill with one server, the floor and then
// lifeguard, its figures printed, exit 0 — and nothing of it left in Nova afterwards.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { realNova } from '../e2e/support/real-nova.ts';

const root = resolve(import.meta.dirname, '../..');

describe('the recovery benchmark in smoke mode (real Nova)', () => {
  it('npm run bench -- recovery --smoke prints the floor, lifeguard in both modes and the peer figures, exits 0 and leaves no server', async () => {
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
      (done, fail) => {
        const child = spawn(process.execPath, ['scripts/run-bench.mjs', 'recovery', '--smoke'], {
          cwd: root,
          env: process.env,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
        child.on('error', fail);
        child.on('close', (code) => done({ code, stdout, stderr }));
      },
    );
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(
      result.stdout,
      /recovery on real Nova: 1 SIGKILLs of a compute with 1 servers each, for the floor and each mode/,
    );
    assert.match(result.stdout, /floor 1\/1 \S+: Nova says down \d+\.\d\d s/);
    assert.match(result.stdout, /lifeguard nova 1\/1 \S+: down \d+\.\d\d s, fenced \d+\.\d\d s/);
    assert.match(result.stdout, /lifeguard host-agent 1\/1 \S+: down \d+\.\d\d s, fenced \d+\.\d\d s/);
    assert.match(
      result.stdout,
      /^nova: all servers ACTIVE min \/ median \/ max: [\d.]+ \/ [\d.]+ \/ [\d.]+ s$/m,
    );
    assert.match(
      result.stdout,
      /^host-agent: all servers ACTIVE min \/ median \/ max: [\d.]+ \/ [\d.]+ \/ [\d.]+ s$/m,
    );
    assert.match(result.stdout, /every server ACTIVE on another host \(seen in Nova\) +\d+\.\d\d/);
    assert.match(
      result.stdout,
      /peer InstanceHA .*all ACTIVE 12\.80 \/ 24\.12 \/ 28\.38 s \(min \/ median \/ max\)/,
    );
    realNova(); // the harness's variables are set
    const response = await fetch(`${process.env.NOVA_URL}/servers?all_tenants=1`, {
      headers: { 'x-auth-token': process.env.RN_TOKEN!, accept: 'application/json' },
    });
    const { servers } = (await response.json()) as { servers: Array<{ name: string }> };
    assert.deepEqual(
      servers.filter((server) => server.name.startsWith('bench-')),
      [],
      'the benchmark deleted its servers',
    );
  });
});
