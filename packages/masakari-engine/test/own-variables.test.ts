import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { MASAKARI_ENGINE_VARIABLES } from '@lifeguard/masakari-api';
import { unknownVariableWarning, unusedCloudEnvironment } from '@lifeguard/testing';
import { masakariEngineSettingsSchema } from '../src/index.ts';

const directory = mkdtempSync(join(tmpdir(), 'masakari-engine-variables-'));
after(() => rmSync(directory, { recursive: true, force: true }));

describe('the Masakari engine’s LIFEGUARD_MASAKARI_* variables', () => {
  it('are the ones the Masakari API lists as the engine’s (MASAKARI_ENGINE_VARIABLES)', () => {
    const read = Object.keys(masakariEngineSettingsSchema.shape).filter((name) =>
      name.startsWith('LIFEGUARD_MASAKARI_'),
    );
    assert.deepEqual(read.sort(), [...MASAKARI_ENGINE_VARIABLES].sort());
  });

  it('lifeguard-masakari-engine logs a warning naming LIFEGUARD_MASAKARI_RETRY_SECOND and LIFEGUARD_MASAKARI_RETRY_SECONDS before it contacts a broker', async () => {
    const record = await unknownVariableWarning(
      'masakari-engine',
      'main',
      {
        ...unusedCloudEnvironment(directory),
        INSTANCEHA_CONFIG_PATH: join(directory, 'no-config.yaml'),
        LIFEGUARD_MASAKARI_RETRY_SECOND: '60',
      },
      'LIFEGUARD_MASAKARI_RETRY_SECOND',
    );
    assert.deepEqual(
      [record.level, record.variable, record.meant],
      [40, 'LIFEGUARD_MASAKARI_RETRY_SECOND', 'LIFEGUARD_MASAKARI_RETRY_SECONDS'],
    );
  });
});
