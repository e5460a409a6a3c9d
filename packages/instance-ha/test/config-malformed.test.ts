import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError } from '@lifeguard/runtime';
import { loadInstanceHaConfig } from '../src/index.ts';

const root = mkdtempSync(join(tmpdir(), 'lifeguard-config-malformed-'));
after(() => rmSync(root, { recursive: true, force: true }));

/**
 * Malformed config.yaml entries. InstanceHA's own rule for a bad value of a known key is to use the
 * default (or clamp) and say so (docs/instance-ha-rules.md#configuration-keys): `warning` cases must
 * name the key in a warning and must not keep the bad value; `error` cases must stop start-up with a
 * ConfigError naming the key.
 */
const cases: ReadonlyArray<{ name: string; yaml: string; key: string; outcome: 'warning' | 'error' }> = [
  { name: 'POLL as a word', yaml: 'config:\n  POLL: fast\n', key: 'POLL', outcome: 'warning' },
  { name: 'POLL negative', yaml: 'config:\n  POLL: -5\n', key: 'POLL', outcome: 'warning' },
  { name: 'POLL a list', yaml: 'config:\n  POLL: [1, 2]\n', key: 'POLL', outcome: 'warning' },
  { name: 'POLL a mapping', yaml: 'config:\n  POLL: {a: 1}\n', key: 'POLL', outcome: 'warning' },
  { name: 'DELTA negative', yaml: 'config:\n  DELTA: -1\n', key: 'DELTA', outcome: 'warning' },
  { name: 'THRESHOLD over 100', yaml: 'config:\n  THRESHOLD: 1000\n', key: 'THRESHOLD', outcome: 'warning' },
  { name: 'THRESHOLD negative', yaml: 'config:\n  THRESHOLD: -1\n', key: 'THRESHOLD', outcome: 'warning' },
  {
    name: 'KDUMP_TIMEOUT negative',
    yaml: 'config:\n  KDUMP_TIMEOUT: -30\n',
    key: 'KDUMP_TIMEOUT',
    outcome: 'warning',
  },
  {
    name: 'boolean a word',
    yaml: 'config:\n  SMART_EVACUATION: maybe\n',
    key: 'SMART_EVACUATION',
    outcome: 'warning',
  },
  {
    name: 'boolean a list',
    yaml: 'config:\n  CHECK_KDUMP: [true]\n',
    key: 'CHECK_KDUMP',
    outcome: 'warning',
  },
  {
    name: 'EVACUABLE_TAG a list',
    yaml: 'config:\n  EVACUABLE_TAG: [a]\n',
    key: 'EVACUABLE_TAG',
    outcome: 'warning',
  },
  // A list read as empty would skip nothing the operator named: every list key stops start-up instead.
  {
    name: 'SKIP_SERVERS_WITH_NAME a mapping',
    yaml: 'config:\n  SKIP_SERVERS_WITH_NAME: {a: 1}\n',
    key: 'SKIP_SERVERS_WITH_NAME',
    outcome: 'error',
  },
  {
    name: 'SKIP_SERVERS_WITH_METADATA a mapping',
    yaml: 'config:\n  SKIP_SERVERS_WITH_METADATA: {ha: off}\n',
    key: 'SKIP_SERVERS_WITH_METADATA',
    outcome: 'error',
  },
  {
    name: 'SKIP_SERVERS_IN_PROJECT a boolean',
    yaml: 'config:\n  SKIP_SERVERS_IN_PROJECT: true\n',
    key: 'SKIP_SERVERS_IN_PROJECT',
    outcome: 'error',
  },
  {
    name: 'SKIP_SERVERS_WITH_TAG a list holding a mapping',
    yaml: 'config:\n  SKIP_SERVERS_WITH_TAG: [a, {b: c}]\n',
    key: 'SKIP_SERVERS_WITH_TAG',
    outcome: 'error',
  },
  { name: 'UDP_PORT over 65535', yaml: 'config:\n  UDP_PORT: 70000\n', key: 'UDP_PORT', outcome: 'warning' },
  {
    name: 'HEARTBEAT_PORT zero',
    yaml: 'config:\n  HEARTBEAT_PORT: 0\n',
    key: 'HEARTBEAT_PORT',
    outcome: 'warning',
  },
  {
    name: 'HEARTBEAT_PORT a word',
    yaml: 'config:\n  HEARTBEAT_PORT: http\n',
    key: 'HEARTBEAT_PORT',
    outcome: 'warning',
  },
  {
    name: 'SSL_CA_BUNDLE a number',
    yaml: 'config:\n  SSL_CA_BUNDLE: 5\n',
    key: 'SSL_CA_BUNDLE',
    outcome: 'warning',
  },
  {
    name: 'SSL_CA_BUNDLE a list',
    yaml: 'config:\n  SSL_CA_BUNDLE: [a]\n',
    key: 'SSL_CA_BUNDLE',
    outcome: 'warning',
  },
  { name: 'LOGLEVEL unknown', yaml: 'config:\n  LOGLEVEL: LOUD\n', key: 'LOGLEVEL', outcome: 'error' },
  {
    name: 'KDUMP_ADDRESS_MAP not an IP',
    yaml: 'config:\n  KDUMP_ADDRESS_MAP: {compute-0: not-an-ip}\n',
    key: 'KDUMP_ADDRESS_MAP.compute-0',
    outcome: 'error',
  },
  { name: 'config a list', yaml: 'config:\n  - POLL\n', key: 'config', outcome: 'error' },
  { name: 'config a word', yaml: 'config: yes\n', key: 'config', outcome: 'error' },
  {
    name: 'not YAML (unclosed list)',
    yaml: 'config:\n  POLL: [unclosed\n',
    key: 'INSTANCEHA_CONFIG_PATH',
    outcome: 'error',
  },
  {
    name: 'not YAML (tab indentation)',
    yaml: 'config:\n\tPOLL: 5\n',
    key: 'INSTANCEHA_CONFIG_PATH',
    outcome: 'error',
  },
  { name: 'top level a list', yaml: '- a\n- b\n', key: 'INSTANCEHA_CONFIG_PATH', outcome: 'error' },
];

describe('a list key given as a number', () => {
  it('is that one item, as a YAML number elsewhere is taken as its text (SKIP_SERVERS_IN_PROJECT: 42)', () => {
    const path = join(root, 'config-number-list.yaml');
    writeFileSync(path, 'config:\n  SKIP_SERVERS_IN_PROJECT: 42\n');
    const loaded = loadInstanceHaConfig({ path, env: {} });
    assert.deepEqual(loaded.config.skipServersInProject, ['42']);
    assert.deepEqual(
      loaded.warnings.filter((each) => each.key === 'SKIP_SERVERS_IN_PROJECT'),
      [],
    );
  });
});

describe('malformed config.yaml entries are refused with the key named', () => {
  cases.forEach((entry, index) => {
    it(`${entry.name}: ${entry.outcome} naming ${entry.key}`, () => {
      const path = join(root, `config-${index}.yaml`);
      writeFileSync(path, entry.yaml);
      if (entry.outcome === 'error') {
        assert.throws(
          () => loadInstanceHaConfig({ path, env: {} }),
          (error: unknown) => {
            assert.ok(error instanceof ConfigError, `expected ConfigError, got ${String(error)}`);
            assert.ok(
              error.problems.some((problem) => problem.key === entry.key),
              `no problem names ${entry.key}: ${error.message}`,
            );
            assert.match(error.message, new RegExp(`${entry.key.replaceAll('.', '\\.')} \\(`));
            assert.ok(error.message.includes(path), 'the file is named');
            return true;
          },
        );
        return;
      }
      const loaded = loadInstanceHaConfig({ path, env: {} });
      const warning = loaded.warnings.find((each) => each.key === entry.key);
      assert.ok(warning, `no warning names ${entry.key}: ${JSON.stringify(loaded.warnings)}`);
      assert.equal(warning.source, path);
      assert.match(
        warning.problem,
        /using the default|clamped to|read as false/,
        'the warning says what is used instead of the bad value',
      );
    });
  });
});
