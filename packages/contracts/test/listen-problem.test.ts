import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { listenProblem } from '../src/index.ts';

/** The error a server gets listening on `host`, as the health server would. */
function listenError(host: string): Promise<NodeJS.ErrnoException> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', resolve);
    server.listen(0, host, () => server.close(() => reject(new Error(`${host} was accepted`))));
  });
}

describe('listenProblem (the setting that fixes a listen error)', () => {
  // A name that does not resolve fails with ENOTFOUND, or EAI_AGAIN where no resolver answers.
  const cases: Array<[host: string, codes: string[]]> = [
    ['999.1.1.1', ['ENOTFOUND', 'EAI_AGAIN']],
    ['192.0.2.77', ['EADDRNOTAVAIL']],
  ];
  for (const [host, codes] of cases) {
    it(`names the host setting for listening on ${host} (${codes.join(' or ')})`, async () => {
      const error = await listenError(host);
      assert.ok(codes.includes(String(error.code)), String(error.code));
      assert.deepEqual([listenProblem(error)?.code, listenProblem(error)?.setting], [error.code, 'host']);
    });
  }

  it('gives null for an error no setting fixes, and for codes named as inherited properties', () => {
    for (const code of ['ECONNRESET', 'toString', 'constructor', undefined])
      assert.equal(listenProblem(Object.assign(new Error('x'), { code })), null, String(code));
  });
});
