// How tests start lifeguard's programs as processes: compiled or from source, by LIFEGUARD_TEST_PROCESSES.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { lifeguardEntryPoint, lifeguardProcessRun, withoutNodeOptions } from '../src/index.ts';

describe('lifeguardProcessRun', () => {
  const cases: [string, string | undefined, string][] = [
    ['unset: from source', undefined, 'source'],
    ['dist', 'dist', 'dist'],
    ['source', 'source', 'source'],
  ];
  for (const [name, value, expected] of cases) {
    it(name, () => assert.equal(lifeguardProcessRun({ LIFEGUARD_TEST_PROCESSES: value }), expected));
  }
  it('refuses any other value, naming the variable and the value', () => {
    assert.throws(
      () => lifeguardProcessRun({ LIFEGUARD_TEST_PROCESSES: 'built' }),
      /LIFEGUARD_TEST_PROCESSES must be "dist" or "source" \(got "built"\)/,
    );
  });
});

describe('lifeguardEntryPoint', () => {
  it('names a main that exists in the mode npm test runs in, and it starts (the CLI prints its help)', async () => {
    const args = lifeguardEntryPoint('cli');
    assert.ok(existsSync(args.at(-1)!), `${args.at(-1)} exists`);
    assert.match(args.at(-1)!, lifeguardProcessRun() === 'dist' ? /dist\/main\.js$/ : /src\/main\.ts$/);
    const output = await new Promise<string>((done, fail) =>
      execFile(
        process.execPath,
        [...args, '--help'],
        { env: withoutNodeOptions(process.env), timeout: 60_000 },
        (error, stdout) => (error ? fail(error) : done(stdout)),
      ),
    );
    assert.match(output, /lifeguard/);
  });

  it('withoutNodeOptions drops NODE_OPTIONS and keeps the rest', () => {
    assert.deepEqual(withoutNodeOptions({ NODE_OPTIONS: '--import tsx', PATH: '/bin' }), { PATH: '/bin' });
  });
});
