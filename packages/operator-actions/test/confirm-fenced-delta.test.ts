import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { configuredDeltaSeconds } from '../src/index.ts';

describe('host confirm-fenced: the DELTA that judges "reporting"', () => {
  const directory = mkdtempSync(join(tmpdir(), 'lifeguard-cli-delta-'));
  after(() => rmSync(directory, { recursive: true, force: true }));
  const configFile = (text: string): string => {
    const path = join(directory, `config-${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(path, text);
    return path;
  };

  it("takes the DELTA of the deployment's config.yaml, as the node monitor does", () => {
    const path = configFile('config:\n  DELTA: 120\n');
    assert.equal(configuredDeltaSeconds({ env: { INSTANCEHA_CONFIG_PATH: path } }), 120);
  });

  it('lets the DELTA environment variable override config.yaml', () => {
    const path = configFile('config:\n  DELTA: 120\n');
    assert.equal(configuredDeltaSeconds({ env: { INSTANCEHA_CONFIG_PATH: path, DELTA: '45' } }), 45);
  });

  it("falls back to InstanceHA's default of 30 s without a config.yaml", () => {
    const missing = join(directory, 'absent.yaml');
    assert.equal(configuredDeltaSeconds({ env: { INSTANCEHA_CONFIG_PATH: missing } }), 30);
  });

  it('refuses a config.yaml that is not valid YAML, naming the file', () => {
    const path = configFile('config: [DELTA: 1\n');
    assert.throws(() => configuredDeltaSeconds({ env: { INSTANCEHA_CONFIG_PATH: path } }), new RegExp(path));
  });
});
