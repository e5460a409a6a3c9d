import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  chooseDemoFencing,
  DEFAULT_FENCE_AGENTS_DIRECTORY,
  demoFencingMessage,
  fenceAgentsDirectory,
} from '../src/demo-fencing.ts';

describe('the demo cloud’s fence driver', () => {
  it('is fence_redfish when the fencing worker can run it, the built-in Redfish driver otherwise', () => {
    const directory = mkdtempSync(join(tmpdir(), 'fence-agents-'));
    try {
      assert.deepEqual(chooseDemoFencing(directory), {
        driver: 'redfish',
        fenceRedfishPath: join(directory, 'fence_redfish'),
      });
      writeFileSync(join(directory, 'fence_redfish'), '#!/bin/sh\n');
      chmodSync(join(directory, 'fence_redfish'), 0o644);
      assert.equal(
        chooseDemoFencing(directory).driver,
        'redfish',
        'a file that is not executable does not count',
      );
      chmodSync(join(directory, 'fence_redfish'), 0o755);
      assert.equal(chooseDemoFencing(directory).driver, 'fence_redfish');
    } finally {
      rmSync(directory, { recursive: true });
    }
  });

  it('looks where the fencing worker looks: LIFEGUARD_FENCE_AGENTS_DIRECTORY, the last environment that sets it winning', () => {
    assert.equal(fenceAgentsDirectory({}), DEFAULT_FENCE_AGENTS_DIRECTORY);
    assert.equal(fenceAgentsDirectory({ LIFEGUARD_FENCE_AGENTS_DIRECTORY: '/opt/a' }, {}), '/opt/a');
    assert.equal(
      fenceAgentsDirectory(
        { LIFEGUARD_FENCE_AGENTS_DIRECTORY: '/opt/a' },
        { LIFEGUARD_FENCE_AGENTS_DIRECTORY: '/opt/b' },
      ),
      '/opt/b',
    );
  });

  it('is named in one sentence that also says when fence_redfish is used', () => {
    const builtIn = demoFencingMessage({ driver: 'redfish', fenceRedfishPath: '/usr/sbin/fence_redfish' });
    assert.match(builtIn, /fenced by lifeguard's built-in Redfish driver/);
    assert.match(builtIn, /fence_redfish is used instead when installed at \/usr\/sbin\/fence_redfish/);
    assert.match(builtIn, /fence-agents/);
    const agent = demoFencingMessage({
      driver: 'fence_redfish',
      fenceRedfishPath: '/usr/sbin/fence_redfish',
    });
    assert.match(agent, /fenced by fence_redfish \(\/usr\/sbin\/fence_redfish\)/);
  });
});
