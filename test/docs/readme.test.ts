// README.md is the user's door: these tests keep its configuration reference complete and its examples
// true — every variable the code reads and every config.yaml key is documented there, and the
// config.yaml exclusion, fencing.yaml and clouds.yaml examples load with the real loaders.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadFencingConfig } from '@lifeguard/fencing-worker';
import {
  INSTANCE_HA_KEYS,
  LIFEGUARD_BOOLEAN_KEYS,
  LIFEGUARD_INTEGER_KEYS,
  LIFEGUARD_KEYS,
  LIFEGUARD_LIST_KEYS,
  loadInstanceHaConfig,
  PORT_KEYS,
  parseMetadataMatch,
  UNUSED_INSTANCE_HA_KEYS,
} from '@lifeguard/instance-ha';
import { loadCloudConfig } from '@lifeguard/openstack';

const root = join(import.meta.dirname, '..', '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');

/** Identifiers that look like variables but are names in the code. */
const NOT_VARIABLES = new Set([
  'LIFEGUARD_KEYS',
  'LIFEGUARD_INTEGER_KEYS',
  'LIFEGUARD_BOOLEAN_KEYS',
  'LIFEGUARD_LIST_KEYS',
  'LIFEGUARD_EVENT_TYPES',
  'LIFEGUARD_PATTERN',
  'LIFEGUARD_RESERVED_PATTERN',
  'LIFEGUARD_PROCESS_STOPPED_PATTERN',
]);

function sourceFiles(directory: string, found: string[] = []): string[] {
  for (const name of readdirSync(directory)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const path = join(directory, name);
    if (statSync(path).isDirectory()) sourceFiles(path, found);
    else if (/\.(ts|mjs)$/.test(name) && !name.endsWith('.test.ts')) found.push(path);
  }
  return found;
}

function yamlBlockStartingWith(prefix: string): string {
  const blocks = [...readme.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1]!);
  const block = blocks.find((text) => text.startsWith(prefix));
  assert.ok(block, `README has a yaml example starting with ${prefix}`);
  return block;
}

describe('README.md', () => {
  it('documents every environment variable the packages and scripts read', () => {
    const variables = new Set<string>();
    const files = [
      ...readdirSync(join(root, 'packages')).flatMap((name) =>
        statSync(join(root, 'packages', name, 'src'), { throwIfNoEntry: false })
          ? sourceFiles(join(root, 'packages', name, 'src'))
          : [],
      ),
      ...sourceFiles(join(root, 'scripts')),
    ];
    for (const file of files) {
      for (const match of readFileSync(file, 'utf8').matchAll(
        /\b(?:LIFEGUARD|CLOUD_SIM)_[A-Z][A-Z0-9_]*\b/g,
      )) {
        if (!NOT_VARIABLES.has(match[0])) variables.add(match[0]);
      }
    }
    assert.ok(variables.size > 50, `found ${variables.size} variables`);
    const undocumented = [...variables].filter((name) => !readme.includes(`\`${name}\``)).sort();
    assert.deepEqual(undocumented, [], 'every variable appears in README.md as `NAME`');
  });

  it("documents every key of InstanceHA's config.yaml that lifeguard reads, and lifeguard's own", () => {
    const keys = [
      ...Object.keys(INSTANCE_HA_KEYS),
      ...Object.keys(PORT_KEYS),
      ...Object.keys(LIFEGUARD_INTEGER_KEYS),
      ...Object.keys(LIFEGUARD_BOOLEAN_KEYS),
      ...Object.keys(LIFEGUARD_LIST_KEYS),
      ...LIFEGUARD_KEYS,
      ...UNUSED_INSTANCE_HA_KEYS,
    ];
    const undocumented = keys.filter((key) => !readme.includes(`\`${key}\``));
    assert.deepEqual(undocumented, []);
  });

  it('its config.yaml exclusion example loads with the InstanceHA config loader, every exclusion read', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'readme-config-')), 'config.yaml');
    writeFileSync(path, yamlBlockStartingWith('config:\n  SKIP_SERVERS_WITH_NAME:'));
    const { config, warnings, unknownKeys } = loadInstanceHaConfig({ path, env: {} });
    assert.deepEqual([warnings, unknownKeys], [[], []]);
    assert.deepEqual(config.skipServersWithName, ['amphora-*']);
    assert.deepEqual(config.skipServersInProject, ['service']);
    assert.deepEqual(config.skipServersWithTag, ['no-evacuate']);
    assert.deepEqual(config.skipServersWithMetadata.map(parseMetadataMatch), [
      { key: 'ha-policy', value: 'manual' },
    ]);
  });

  it('its fencing.yaml example loads with the fencing worker’s loader', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'readme-fencing-')), 'fencing.yaml');
    writeFileSync(path, yamlBlockStartingWith('FencingConfig:'));
    const configuration = loadFencingConfig(path, {
      defaultTimeoutSeconds: 30,
      allowLoopback: false,
      allowNoop: false,
      tls: { verify: true, caBundlePath: null, certificatePath: null, keyPath: null },
      fenceAgentsDirectory: '/usr/sbin',
    });
    const methods = configuration.hosts.map((entry) => [
      entry.key,
      entry.methods.map((method) => method.kind),
    ]);
    assert.deepEqual(methods, [
      ['compute-0', ['redfish']],
      ['compute-1', ['fence-agent', 'ipmi']],
    ]);
  });

  it('its clouds.yaml example loads with the OpenStack client’s loader', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'readme-clouds-')), 'clouds.yaml');
    writeFileSync(path, yamlBlockStartingWith('clouds:'));
    const cloud = loadCloudConfig({
      env: { OS_CLOUD: 'production', OS_CLIENT_CONFIG_FILE: path },
      searchDirectories: [],
    });
    assert.deepEqual(
      [cloud.name, cloud.authType, cloud.regionName, cloud.interface],
      ['production', 'v3applicationcredential', 'RegionOne', 'internal'],
    );
  });
});
