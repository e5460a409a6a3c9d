import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { requireRealNovaVariables } from '../src/index.ts';

describe('requireRealNovaVariables', () => {
  it('returns the variables the runner exported', () => {
    assert.deepEqual(
      requireRealNovaVariables(['NOVA_URL', 'RN_TOKEN'], { NOVA_URL: 'http://n', RN_TOKEN: 't' }),
      {
        NOVA_URL: 'http://n',
        RN_TOKEN: 't',
      },
    );
  });

  it('fails with why the runner could not have the harness, else with the missing variables', () => {
    assert.throws(
      () =>
        requireRealNovaVariables(['NOVA_URL'], { RN_UNAVAILABLE: 'start.sh failed (exit 1): port in use' }),
      /could not be had for this run: start\.sh failed \(exit 1\): port in use/,
    );
    assert.throws(
      () => requireRealNovaVariables(['NOVA_URL', 'RN_TOKEN'], { RN_TOKEN: 't' }),
      /missing NOVA_URL\)/,
    );
  });
});
