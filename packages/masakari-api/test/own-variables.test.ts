import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { unknownVariables } from '@lifeguard/runtime';
import { unknownVariableWarning, unusedCloudEnvironment } from '@lifeguard/testing';
import { MASAKARI_ENGINE_VARIABLES, MASAKARI_VARIABLES } from '../src/index.ts';

const directory = mkdtempSync(join(tmpdir(), 'masakari-variables-'));
after(() => rmSync(directory, { recursive: true, force: true }));

describe('the LIFEGUARD_MASAKARI_* variables the Masakari API and engine read', () => {
  it('name LIFEGUARD_MASAKARI_API_PROT with the variable it misspells, LIFEGUARD_MASAKARI_API_PORT', () => {
    assert.deepEqual(
      unknownVariables({ LIFEGUARD_MASAKARI_API_PROT: '16000' }, MASAKARI_VARIABLES).map((each) => [
        each.variable,
        each.meant,
      ]),
      [['LIFEGUARD_MASAKARI_API_PROT', 'LIFEGUARD_MASAKARI_API_PORT']],
    );
  });

  it('take the engine’s variables as known, since both programs get the same environment', () => {
    const env = Object.fromEntries(MASAKARI_ENGINE_VARIABLES.map((name) => [name, '1']));
    assert.deepEqual(unknownVariables({ ...env, LIFEGUARD_MASAKARI_API_PORT: '1' }, MASAKARI_VARIABLES), []);
  });

  it('lifeguard-masakari-api logs a warning naming LIFEGUARD_MASAKARI_API_PROT and LIFEGUARD_MASAKARI_API_PORT before it contacts a broker', async () => {
    const record = await unknownVariableWarning(
      'masakari-api',
      'main',
      {
        ...unusedCloudEnvironment(directory),
        LIFEGUARD_MASAKARI_API_PROT: '16000',
      },
      'LIFEGUARD_MASAKARI_API_PROT',
    );
    assert.deepEqual(
      [record.level, record.variable, record.meant],
      [40, 'LIFEGUARD_MASAKARI_API_PROT', 'LIFEGUARD_MASAKARI_API_PORT'],
    );
    assert.match(String(record.msg), /did you mean LIFEGUARD_MASAKARI_API_PORT\?/);
  });
});
