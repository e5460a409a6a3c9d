import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '@lifeguard/runtime';
import { CapturedLines } from '@lifeguard/testing';
import { loadInstanceHaConfig, logConfigWarnings } from '../src/index.ts';

function loggedLevels(env: Record<string, string>): Array<{ key: unknown; level: unknown }> {
  const { warnings } = loadInstanceHaConfig({ path: '/nonexistent/config.yaml', env });
  const lines = new CapturedLines();
  logConfigWarnings(createLogger({ service: 'test', level: 'info', destination: lines }), warnings);
  return lines
    .records()
    .filter((record) => record.key !== '(file)') // the missing config.yaml, said the same way in every case
    .map((record) => ({ key: record.key, level: record.level }));
}

describe('config.yaml warnings in the log', () => {
  it('a POLL below InstanceHA’s minimum kept on purpose (LIFEGUARD_UNSAFE_SHORT_INTERVALS) is logged at info, not warn', () => {
    assert.deepEqual(loggedLevels({ POLL: '2', LIFEGUARD_UNSAFE_SHORT_INTERVALS: 'true' }), [
      { key: 'POLL', level: 30 },
    ]);
  });

  it('a POLL clamped because it was out of range is logged at warn', () => {
    assert.deepEqual(loggedLevels({ POLL: '2' }), [{ key: 'POLL', level: 40 }]);
  });

  it('a misspelt boolean read as false is logged at warn', () => {
    assert.deepEqual(loggedLevels({ SMART_EVACUATION: 'ture' }), [{ key: 'SMART_EVACUATION', level: 40 }]);
  });
});
