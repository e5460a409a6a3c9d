import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { unknownVariableWarning, unusedCloudEnvironment } from '@lifeguard/testing';

const directory = mkdtempSync(join(tmpdir(), 'fencing-variables-'));
after(() => rmSync(directory, { recursive: true, force: true }));

describe('the LIFEGUARD_FENCING_* variables', () => {
  it('the fencing worker logs a warning naming LIFEGUARD_FENCING_ATTEMPT and LIFEGUARD_FENCING_ATTEMPTS before it contacts a broker', async () => {
    const fencingConfig = join(directory, 'fencing.yaml');
    writeFileSync(fencingConfig, 'FencingConfig:\n  compute-0: { agent: noop }\n');
    const record = await unknownVariableWarning(
      'fencing-worker',
      'main',
      {
        ...unusedCloudEnvironment(directory),
        FENCING_CONFIG_PATH: fencingConfig,
        INSTANCEHA_CONFIG_PATH: join(directory, 'absent-config.yaml'),
        LIFEGUARD_FENCING_ALLOW_NOOP: 'true',
        LIFEGUARD_FENCING_ATTEMPT: '5',
      },
      'LIFEGUARD_FENCING_ATTEMPT',
    );
    assert.deepEqual(
      [record.level, record.variable, record.meant],
      [40, 'LIFEGUARD_FENCING_ATTEMPT', 'LIFEGUARD_FENCING_ATTEMPTS'],
    );
  });
});
