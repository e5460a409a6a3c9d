import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { unknownVariableWarning, unusedCloudEnvironment } from '@lifeguard/testing';

const directory = mkdtempSync(join(tmpdir(), 'evacuation-variables-'));
after(() => rmSync(directory, { recursive: true, force: true }));

describe('the LIFEGUARD_EVACUATION_* variables', () => {
  it('the evacuation worker logs a warning naming LIFEGUARD_EVACUATION_POLL_SECOND and LIFEGUARD_EVACUATION_POLL_SECONDS before it contacts a broker', async () => {
    const record = await unknownVariableWarning(
      'evacuation-worker',
      'main',
      {
        ...unusedCloudEnvironment(directory),
        INSTANCEHA_CONFIG_PATH: join(directory, 'absent-config.yaml'),
        LIFEGUARD_EVACUATION_POLL_SECOND: '5',
      },
      'LIFEGUARD_EVACUATION_POLL_SECOND',
    );
    assert.deepEqual(
      [record.level, record.variable, record.meant],
      [40, 'LIFEGUARD_EVACUATION_POLL_SECOND', 'LIFEGUARD_EVACUATION_POLL_SECONDS'],
    );
  });
});
