import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CloudConfigError, loadCloudConfig } from '../src/index.ts';

const root = mkdtempSync(join(tmpdir(), 'lifeguard-clouds-malformed-'));
after(() => rmSync(root, { recursive: true, force: true }));

const secret = 'Clouds-Malformed-S3cret';
/** A clouds.yaml with one cloud `c`: `settings` lines at the cloud level, `auth` lines under auth. */
function cloud(settings: string[], auth: string[]): string {
  const lines = ['clouds:', '  c:', ...settings.map((line) => `    ${line}`)];
  if (auth.length > 0) lines.push('    auth:', ...auth.map((line) => `      ${line}`));
  return `${lines.join('\n')}\n`;
}
const auth = [
  'auth_url: http://keystone.example:5000/v3',
  'username: admin',
  `password: ${secret}`,
  'project_name: admin',
];
const without = (name: string) => auth.filter((line) => !line.startsWith(`${name}:`));
const replace = (name: string, value: string) => [...without(name), `${name}: ${value}`];

/**
 * Malformed clouds.yaml entries: each must be refused with a CloudConfigError whose first problem
 * names `key`, says what is wrong (`problem`), names the file, and never shows the password.
 */
const cases: ReadonlyArray<{ name: string; yaml: string; key: string; problem: RegExp }> = [
  {
    name: 'auth_url missing',
    yaml: cloud([], without('auth_url')),
    key: 'clouds.c.auth.auth_url',
    problem: /required for auth type password/,
  },
  {
    name: 'auth_url a number',
    yaml: cloud([], replace('auth_url', '5')),
    key: 'clouds.c.auth.auth_url',
    problem: /http:\/\/ or https:\/\/ URL/,
  },
  {
    name: 'auth_url not a URL',
    yaml: cloud([], replace('auth_url', 'keystone')),
    key: 'clouds.c.auth.auth_url',
    problem: /http:\/\/ or https:\/\/ URL/,
  },
  {
    name: 'auth_url port out of range',
    yaml: cloud([], replace('auth_url', 'http://keystone:99999/v3')),
    key: 'clouds.c.auth.auth_url',
    problem: /URL/,
  },
  {
    name: 'auth_url ftp',
    yaml: cloud([], replace('auth_url', 'ftp://keystone/v3')),
    key: 'clouds.c.auth.auth_url',
    problem: /URL/,
  },
  {
    name: 'password missing',
    yaml: cloud([], without('password')),
    key: 'clouds.c.auth.password',
    problem: /required/,
  },
  {
    name: 'password a list',
    yaml: cloud([], replace('password', `[${secret}]`)),
    key: 'clouds.c.auth.password',
    problem: /expected a string or number, got a list/,
  },
  {
    name: 'username a mapping',
    yaml: cloud([], replace('username', '{a: 1}')),
    key: 'clouds.c.auth.username',
    problem: /expected a string or number, got a mapping/,
  },
  {
    name: 'project missing',
    yaml: cloud([], without('project_name')),
    key: 'clouds.c.auth.project_name',
    problem: /project_name or project_id/,
  },
  {
    name: 'unknown auth type (driver)',
    yaml: cloud(['auth_type: kerberos'], auth),
    key: 'clouds.c.auth_type',
    problem: /unsupported auth type/,
  },
  {
    name: 'auth a word',
    yaml: cloud(['auth: hello'], []),
    key: 'clouds.c.auth',
    problem: /expected a mapping, got a string/,
  },
  {
    name: 'application credential without secret',
    yaml: cloud(
      ['auth_type: v3applicationcredential'],
      ['auth_url: http://k:5000/v3', 'application_credential_id: x'],
    ),
    key: 'clouds.c.auth.application_credential_secret',
    problem: /required/,
  },
  {
    name: 'region_name a list',
    yaml: cloud(['region_name: [a, b]'], auth),
    key: 'clouds.c.region_name',
    problem: /got a list/,
  },
  {
    name: 'interface unknown',
    yaml: cloud(['interface: sideways'], auth),
    key: 'clouds.c.interface',
    problem: /public, internal or admin/,
  },
  {
    name: 'verify a word',
    yaml: cloud(['verify: perhaps'], auth),
    key: 'clouds.c.verify',
    problem: /true or false/,
  },
  {
    name: 'verify FALSE',
    yaml: cloud(['verify: "FALSE"'], auth),
    key: 'clouds.c.verify',
    problem: /not supported/,
  },
  {
    name: 'api_timeout negative',
    yaml: cloud(['api_timeout: -3'], auth),
    key: 'clouds.c.api_timeout',
    problem: />0/,
  },
  {
    name: 'api_timeout a word',
    yaml: cloud(['api_timeout: soon'], auth),
    key: 'clouds.c.api_timeout',
    problem: /number/,
  },
  {
    name: 'identity_api_version 2',
    yaml: cloud(['identity_api_version: 2'], auth),
    key: 'clouds.c.identity_api_version',
    problem: /v3/,
  },
  {
    name: 'cloud entry a word',
    yaml: 'clouds:\n  c: hello\n',
    key: 'clouds.c',
    problem: /must be a mapping/,
  },
  {
    name: 'cloud not defined',
    yaml: 'clouds:\n  other: {}\n',
    key: 'clouds.c',
    problem: /no cloud named "c"/,
  },
  { name: 'clouds a list', yaml: 'clouds:\n  - c\n', key: 'clouds', problem: /mapping of cloud names/ },
  { name: 'not YAML', yaml: 'clouds:\n  c: {auth: \n', key: '(file)', problem: /not valid YAML/ },
];

describe('malformed clouds.yaml entries are refused with the key named', () => {
  cases.forEach((entry, index) => {
    it(`${entry.name}: names ${entry.key}`, () => {
      const directory = join(root, `d${index}`);
      mkdirSync(directory);
      const path = join(directory, 'clouds.yaml');
      writeFileSync(path, entry.yaml);
      assert.throws(
        () => loadCloudConfig({ cloud: 'c', env: {}, searchDirectories: [directory] }),
        (error: unknown) => {
          assert.ok(error instanceof CloudConfigError, `expected CloudConfigError, got ${String(error)}`);
          assert.equal(error.problems[0]?.key, entry.key, error.message);
          assert.match(error.problems[0]!.problem, entry.problem, error.message);
          assert.ok(error.message.includes(path), 'the file is named');
          assert.ok(!error.message.includes(secret), 'the password is not shown');
          return true;
        },
      );
    });
  });
});
