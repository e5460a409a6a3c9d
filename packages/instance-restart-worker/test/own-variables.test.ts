import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { unknownVariables } from '@lifeguard/runtime';
import { unknownVariableWarning, unusedCloudEnvironment } from '@lifeguard/testing';
import { INSTANCE_RESTART_VARIABLES } from '../src/index.ts';

const directory = mkdtempSync(join(tmpdir(), 'instance-restart-variables-'));
after(() => rmSync(directory, { recursive: true, force: true }));

describe('the LIFEGUARD_INSTANCE_RESTART_* and LIFEGUARD_INSTANCE_MONITOR_* variables', () => {
  it('name LIFEGUARD_INSTANCE_MONITOR_LIBVIRT_URL with the variable it misspells, LIFEGUARD_INSTANCE_MONITOR_LIBVIRT_URI', () => {
    assert.deepEqual(
      unknownVariables(
        {
          LIFEGUARD_INSTANCE_MONITOR_LIBVIRT_URL: 'qemu:///system',
          LIFEGUARD_INSTANCE_RESTART_CONCURRENCY: '2',
          LIFEGUARD_INSTANCE_NAME: 'compute-1',
        },
        INSTANCE_RESTART_VARIABLES,
      ).map((each) => [each.variable, each.meant]),
      [['LIFEGUARD_INSTANCE_MONITOR_LIBVIRT_URL', 'LIFEGUARD_INSTANCE_MONITOR_LIBVIRT_URI']],
    );
  });

  it('lifeguard-instance-monitor logs a warning naming LIFEGUARD_INSTANCE_MONITOR_LIBVIRT_URL and LIFEGUARD_INSTANCE_MONITOR_LIBVIRT_URI before it contacts a broker', async () => {
    const record = await unknownVariableWarning(
      'instance-restart-worker',
      'monitor/monitor-main',
      { LIFEGUARD_INSTANCE_MONITOR_LIBVIRT_URL: 'test:///default' },
      'LIFEGUARD_INSTANCE_MONITOR_LIBVIRT_URL',
    );
    assert.deepEqual(
      [record.level, record.variable, record.meant],
      [40, 'LIFEGUARD_INSTANCE_MONITOR_LIBVIRT_URL', 'LIFEGUARD_INSTANCE_MONITOR_LIBVIRT_URI'],
    );
  });

  it('lifeguard-instance-restart-worker logs a warning naming LIFEGUARD_INSTANCE_RESTART_MAX_PER_HOURS and LIFEGUARD_INSTANCE_RESTART_MAX_PER_HOUR before it contacts a broker', async () => {
    const record = await unknownVariableWarning(
      'instance-restart-worker',
      'main',
      { ...unusedCloudEnvironment(directory), LIFEGUARD_INSTANCE_RESTART_MAX_PER_HOURS: '5' },
      'LIFEGUARD_INSTANCE_RESTART_MAX_PER_HOURS',
    );
    assert.deepEqual(
      [record.level, record.variable, record.meant],
      [40, 'LIFEGUARD_INSTANCE_RESTART_MAX_PER_HOURS', 'LIFEGUARD_INSTANCE_RESTART_MAX_PER_HOUR'],
    );
  });
});
