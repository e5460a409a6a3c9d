import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError } from '@lifeguard/runtime';
import { type FencingConfigOptions, loadFencingConfig } from '../src/index.ts';

const root = mkdtempSync(join(tmpdir(), 'lifeguard-fencing-malformed-'));
after(() => rmSync(root, { recursive: true, force: true }));

const options: FencingConfigOptions = {
  defaultTimeoutSeconds: 30,
  allowLoopback: false,
  allowNoop: false,
  tls: { verify: true, caBundlePath: null, certificatePath: null, keyPath: null },
  fenceAgentsDirectory: '/usr/sbin',
};
const password = 'Malformed-Pw-0917';

/** A fencing.yaml with one host entry `compute-0` made of `lines`. */
const host = (...lines: string[]) =>
  `FencingConfig:\n  compute-0:\n${lines.map((line) => `    ${line}\n`).join('')}`;
const ipmi = ['agent: ipmi', 'ipaddr: 192.0.2.10', 'ipport: 623', 'login: admin', `passwd: ${password}`];
const without = (name: string, lines: string[]) => lines.filter((line) => !line.startsWith(`${name}:`));
const replace = (name: string, value: string, lines: string[]) => [
  ...without(name, lines),
  `${name}: ${value}`,
];

/**
 * Malformed fencing.yaml entries: each must stop start-up with a ConfigError whose problems name
 * exactly the keys given (so a bad entry does not also blame keys that are fine), with a message
 * that says what is wrong (`problem` pattern), and never the password.
 */
const cases: ReadonlyArray<{ name: string; yaml: string; keys: string[]; problem: RegExp }> = [
  {
    name: 'unknown driver',
    yaml: host(...replace('agent', 'fence_banana', ipmi)),
    keys: ['FencingConfig.compute-0.agent'],
    problem: /not installed/,
  },
  {
    name: 'driver a path',
    yaml: host(...replace('agent', '/usr/sbin/fence_ipmilan', ipmi)),
    keys: ['FencingConfig.compute-0.agent'],
    problem: /name of a fence agent/,
  },
  {
    name: 'driver missing',
    yaml: host(...without('agent', ipmi)),
    keys: ['FencingConfig.compute-0.agent'],
    problem: /is required/,
  },
  {
    name: 'driver a number',
    yaml: host(...replace('agent', '5', ipmi)),
    keys: ['FencingConfig.compute-0.agent'],
    problem: /ipmi, redfish/,
  },
  {
    name: 'missing address (ipmi)',
    yaml: host(...without('ipaddr', ipmi)),
    keys: ['FencingConfig.compute-0.ipaddr'],
    problem: /is required/,
  },
  {
    name: 'missing address (redfish)',
    yaml: host('agent: redfish', 'login: admin', `passwd: ${password}`),
    keys: ['FencingConfig.compute-0.ipaddr'],
    problem: /is required/,
  },
  {
    name: 'address a number',
    yaml: host(...replace('ipaddr', '12', ipmi)),
    keys: ['FencingConfig.compute-0.ipaddr'],
    problem: /IP address/,
  },
  {
    name: 'address a list',
    yaml: host(...replace('ipaddr', '[192.0.2.10]', ipmi)),
    keys: ['FencingConfig.compute-0.ipaddr'],
    problem: /expected a string or number, got a (list|mapping)/,
  },
  {
    name: 'address a DNS name',
    yaml: host(...replace('ipaddr', 'bmc.example.org', ipmi)),
    keys: ['FencingConfig.compute-0.ipaddr'],
    problem: /IP address/,
  },
  {
    name: 'missing port (ipmi)',
    yaml: host(...without('ipport', ipmi)),
    keys: ['FencingConfig.compute-0.ipport'],
    problem: /is required/,
  },
  {
    name: 'port over 65535',
    yaml: host(...replace('ipport', '70000', ipmi)),
    keys: ['FencingConfig.compute-0.ipport'],
    problem: /1-65535/,
  },
  {
    name: 'port zero',
    yaml: host(...replace('ipport', '0', ipmi)),
    keys: ['FencingConfig.compute-0.ipport'],
    problem: /1-65535/,
  },
  {
    name: 'port negative',
    yaml: host(...replace('ipport', '-1', ipmi)),
    keys: ['FencingConfig.compute-0.ipport'],
    problem: /port number/,
  },
  {
    name: 'port a word',
    yaml: host(...replace('ipport', 'ipmi', ipmi)),
    keys: ['FencingConfig.compute-0.ipport'],
    problem: /port number/,
  },
  {
    name: 'timeout negative',
    yaml: host(...ipmi, 'timeout: -5'),
    keys: ['FencingConfig.compute-0.timeout'],
    problem: /whole number of seconds/,
  },
  {
    name: 'timeout a word',
    yaml: host(...ipmi, 'timeout: soon'),
    keys: ['FencingConfig.compute-0.timeout'],
    problem: /whole number of seconds/,
  },
  {
    name: 'password a list',
    yaml: host(...replace('passwd', `[${password}]`, ipmi)),
    keys: ['FencingConfig.compute-0.passwd'],
    problem: /./,
  },
  {
    name: 'login a mapping',
    yaml: host(...replace('login', '{a: 1}', ipmi)),
    keys: ['FencingConfig.compute-0.login'],
    problem: /expected a string or number, got a (list|mapping)/,
  },
  {
    name: 'unknown key',
    yaml: host(...ipmi, 'colour: red'),
    keys: ['FencingConfig.compute-0'],
    problem: /unknown key\(s\) colour/,
  },
  {
    name: 'redfish tls a word',
    yaml: host('agent: redfish', 'ipaddr: 192.0.2.10', 'login: admin', `passwd: ${password}`, 'tls: perhaps'),
    keys: ['FencingConfig.compute-0.tls'],
    problem: /true or false/,
  },
  {
    name: 'methods empty',
    yaml: 'FencingConfig:\n  compute-0:\n    methods: []\n',
    keys: ['FencingConfig.compute-0.methods'],
    problem: /non-empty list/,
  },
  {
    name: 'methods a word',
    yaml: 'FencingConfig:\n  compute-0:\n    methods: ipmi\n',
    keys: ['FencingConfig.compute-0.methods'],
    problem: /non-empty list/,
  },
  {
    name: 'second method unknown driver',
    yaml: `FencingConfig:\n  compute-0:\n    methods:\n${['- agent: ipmi', ...ipmi.slice(1).map((line) => `  ${line}`), '- agent: nope'].map((line) => `      ${line}\n`).join('')}`,
    keys: ['FencingConfig.compute-0.methods.1.agent'],
    problem: /ipmi, redfish/,
  },
  {
    name: 'host entry a word',
    yaml: 'FencingConfig:\n  compute-0: ipmi\n',
    keys: ['FencingConfig.compute-0'],
    problem: /must be a mapping/,
  },
  {
    name: 'FencingConfig a list',
    yaml: 'FencingConfig:\n  - compute-0\n',
    keys: ['FencingConfig'],
    problem: /mapping of host entries/,
  },
  {
    name: 'FencingConfig missing',
    yaml: 'Fencing:\n  compute-0: {}\n',
    keys: ['FencingConfig'],
    problem: /is required/,
  },
  {
    name: 'not YAML',
    yaml: 'FencingConfig:\n  compute-0: {agent: ipmi\n',
    keys: ['FENCING_CONFIG_PATH'],
    problem: /not valid YAML/,
  },
  { name: 'top level a list', yaml: '- compute-0\n', keys: ['FENCING_CONFIG_PATH'], problem: /mapping/ },
];

describe('malformed fencing.yaml entries are refused with the key named', () => {
  cases.forEach((entry, index) => {
    it(`${entry.name}: names ${entry.keys.join(', ')}`, () => {
      const path = join(root, `fencing-${index}.yaml`);
      writeFileSync(path, entry.yaml);
      assert.throws(
        () => loadFencingConfig(path, options),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError, `expected ConfigError, got ${String(error)}`);
          assert.deepEqual(
            error.problems.map((problem) => problem.key),
            entry.keys,
            `named keys: ${error.message}`,
          );
          assert.match(error.problems[0]!.problem, entry.problem, error.message);
          assert.ok(error.message.includes(path), 'the file is named');
          assert.ok(!error.message.includes(password), 'the password is not shown');
          return true;
        },
      );
    });
  });
});
