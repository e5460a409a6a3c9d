import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, listenErrorAsConfigError } from '../src/index.ts';

const keys = { port: 'LIFEGUARD_HTTP_PORT', host: 'LIFEGUARD_HTTP_HOST' };
const failure = (code: string) => Object.assign(new Error(`listen ${code}`), { code });

describe('listenErrorAsConfigError (the setting a listen error names)', () => {
  const cases: Array<[code: string, key: string, value: string]> = [
    ['EADDRINUSE', 'LIFEGUARD_HTTP_PORT', '"9402"'],
    ['EACCES', 'LIFEGUARD_HTTP_PORT', '"9402"'],
    ['EADDRNOTAVAIL', 'LIFEGUARD_HTTP_HOST', '"999.1.1.1"'],
    ['ENOTFOUND', 'LIFEGUARD_HTTP_HOST', '"999.1.1.1"'],
    ['EAI_AGAIN', 'LIFEGUARD_HTTP_HOST', '"999.1.1.1"'],
  ];
  for (const [code, key, value] of cases) {
    it(`${code} names ${key}`, () => {
      const error = listenErrorAsConfigError(failure(code), keys, '999.1.1.1', 9402);
      assert.ok(error instanceof ConfigError);
      assert.deepEqual([error.problems[0]!.key, error.problems[0]!.value], [key, value]);
      assert.match(error.message, new RegExp(`^cannot listen on 999\\.1\\.1\\.1:9402 \\(${key}\\): `));
    });
  }

  it('leaves an error no setting fixes as it was', () => {
    const error = failure('ECONNRESET');
    assert.equal(listenErrorAsConfigError(error, keys, '127.0.0.1', 9402), error);
  });
});
