import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { unknownVariableWarning, unusedCloudEnvironment } from '@lifeguard/testing';

const directory = mkdtempSync(join(tmpdir(), 'node-monitor-variables-'));
after(() => rmSync(directory, { recursive: true, force: true }));

describe('the LIFEGUARD_NODE_MONITOR_* variables', () => {
  it('the node monitor logs a warning naming LIFEGUARD_NODE_MONITOR_LEASE_TTL_SECOND and LIFEGUARD_NODE_MONITOR_LEASE_TTL_SECONDS before it contacts a broker', async () => {
    const record = await unknownVariableWarning(
      'node-monitor',
      'main',
      {
        ...unusedCloudEnvironment(directory),
        INSTANCEHA_CONFIG_PATH: join(directory, 'absent-config.yaml'),
        LIFEGUARD_NODE_MONITOR_LEASE_TTL_SECOND: '5',
      },
      'LIFEGUARD_NODE_MONITOR_LEASE_TTL_SECOND',
    );
    assert.deepEqual(
      [record.level, record.variable, record.meant],
      [40, 'LIFEGUARD_NODE_MONITOR_LEASE_TTL_SECOND', 'LIFEGUARD_NODE_MONITOR_LEASE_TTL_SECONDS'],
    );
  });
});
