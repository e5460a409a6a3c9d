import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, createLogger } from '@lifeguard/runtime';
import { parse as parseYaml } from 'yaml';
import {
  bmcAddressProblem,
  type FencingConfigOptions,
  FencingConfigurationError,
  HostFencer,
  loadFencingConfig,
  NoopDriver,
  parseFencingConfig,
  sameIdentity,
} from '../src/index.ts';

const options: FencingConfigOptions = {
  defaultTimeoutSeconds: 30,
  allowLoopback: false,
  allowNoop: false,
  tls: { verify: true, caBundlePath: null, certificatePath: null, keyPath: null },
  fenceAgentsDirectory: '/usr/sbin',
};

const parse = (yamlText: string, overrides: Partial<FencingConfigOptions> = {}) =>
  parseFencingConfig(parseYaml(yamlText) as Record<string, unknown>, 'fencing.yaml', {
    ...options,
    ...overrides,
  });

/** The ConfigError thrown by `work`, asserted to be one. */
function configErrorOf(work: () => unknown): ConfigError {
  try {
    work();
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected ConfigError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a ConfigError');
}

describe('fencing.yaml', () => {
  it("reads InstanceHA's entries with their string values and defaults", () => {
    const configuration = parse(`
FencingConfig:
  compute-0:
    agent: ipmi
    ipaddr: "192.0.2.10"
    ipport: "623"
    login: "admin"
    passwd: "ipmi secret"
    timeout: "1000"
  compute-1.example.com:
    agent: REDFISH
    ipaddr: 192.0.2.11
    login: root
    passwd: calvin
`);
    const [ipmi, redfish] = configuration.hosts.map((host) => host.methods[0]!);
    assert.deepEqual(
      { ...ipmi },
      {
        index: 0,
        name: 'ipmi',
        kind: 'ipmi',
        address: '192.0.2.10',
        port: 623,
        login: 'admin',
        password: 'ipmi secret',
        cipherSuite: null,
        expectedGuid: null,
        timeoutSeconds: 300,
      },
    );
    assert.equal(redfish?.kind, 'redfish');
    if (redfish?.kind !== 'redfish') return;
    assert.equal(redfish.port, 443);
    assert.equal(redfish.systemId, 'System.Embedded.1');
    assert.equal(redfish.useTls, false, "InstanceHA's default for tls is false");
    assert.equal(redfish.timeoutSeconds, 30, 'FENCING_TIMEOUT when the entry has no timeout');
  });

  it('matches hosts by short hostname equality, first entry in file order, never by substring', () => {
    const configuration = parse(`
FencingConfig:
  compute-10:
    agent: ipmi
    ipaddr: 192.0.2.10
    ipport: 623
    login: a
    passwd: p
  compute-1.rack-a.example.com:
    agent: ipmi
    ipaddr: 192.0.2.1
    ipport: 623
    login: a
    passwd: p
  compute-1.rack-b.example.com:
    agent: ipmi
    ipaddr: 192.0.2.99
    ipport: 623
    login: a
    passwd: p
`);
    assert.equal(configuration.find('compute-1')?.key, 'compute-1.rack-a.example.com');
    assert.equal(configuration.find('compute-1.other.domain')?.key, 'compute-1.rack-a.example.com');
    assert.equal(configuration.find('compute-10.example.com')?.key, 'compute-10');
    assert.equal(configuration.find('compute-100'), null);
    assert.equal(configuration.find('compute'), null);
  });

  it('reads a topology: methods in order, each with its own agent and identity', () => {
    const configuration = parse(`
FencingConfig:
  compute-2:
    methods:
      - agent: redfish
        ipaddr: 192.0.2.20
        login: root
        passwd: one
        tls: "true"
        expected_system_uuid: "{4C4C4544-0042-3010-8052-B4C04F4E3732}"
      - agent: fence_ipmilan
        ipaddr: 192.0.2.21
        ipport: 6230
        login: admin
        passwd: two
        options: { lanplus: 1, cipher: 3 }
        expected_guid: efcdab89-6745-23a1-efcd-ab89674523a1
`);
    const methods = configuration.find('compute-2')?.methods ?? [];
    assert.deepEqual(
      methods.map((method) => [method.index, method.name]),
      [
        [0, 'redfish'],
        [1, 'fence_ipmilan'],
      ],
    );
    const [redfish, agent] = methods;
    assert.ok(redfish?.kind === 'redfish' && agent?.kind === 'fence-agent');
    assert.equal(redfish.useTls, true);
    assert.equal(redfish.expectedSystemUuid, '4c4c4544004230108052b4c04f4e3732');
    assert.equal(agent.path, '/usr/sbin/fence_ipmilan');
    assert.deepEqual(agent.options, { lanplus: '1', cipher: '3' });
    assert.equal(agent.expectedGuid, 'efcdab89674523a1efcdab89674523a1');
    assert.deepEqual(configuration.secrets(), ['one', 'two']);
  });

  it("applies InstanceHA's input validation and names every bad key, passwords masked", () => {
    const error = configErrorOf(() =>
      parse(`
FencingConfig:
  compute-0:
    agent: ipmi
    ipaddr: bmc-0.example.com
    ipport: "70000"
    login: root@domain
    passwd: "do-not-print-me"
    expected_giud: 0123
  compute-1:
    agent: redfish
    ipaddr: 169.254.169.254
    login: root
    passwd: x
    tls: "ture"
`),
    );
    const keys = error.problems.map((problem) => problem.key);
    assert.ok(keys.includes('FencingConfig.compute-0.ipaddr'), keys.join(', '));
    assert.ok(keys.includes('FencingConfig.compute-0.ipport'));
    assert.ok(keys.includes('FencingConfig.compute-0.login'));
    assert.ok(keys.includes('FencingConfig.compute-1.ipaddr'));
    assert.ok(keys.includes('FencingConfig.compute-1.tls'), 'an unknown boolean word is an error, not false');
    assert.match(error.message, /unknown key\(s\) expected_giud/);
    assert.match(error.message, /must be an IP address literal/);
    assert.match(error.message, /link-local/);
    assert.doesNotMatch(error.message, /do-not-print-me/);
  });

  it('refuses loopback BMCs unless allowed, and unspecified addresses always', () => {
    assert.match(bmcAddressProblem('127.0.0.1', false) ?? '', /loopback/);
    assert.match(bmcAddressProblem('::ffff:127.0.0.1', false) ?? '', /loopback/);
    assert.equal(bmcAddressProblem('127.0.0.1', true), null);
    assert.equal(bmcAddressProblem('::1', true), null);
    assert.match(bmcAddressProblem('0.0.0.0', true) ?? '', /unspecified/);
    assert.match(bmcAddressProblem('fe80::1', true) ?? '', /link-local/);
    assert.equal(bmcAddressProblem('2001:db8::5', false), null);
    const text = `
FencingConfig:
  compute-0: { agent: ipmi, ipaddr: 127.0.0.1, ipport: 623, login: a, passwd: p }
`;
    assert.throws(() => parse(text), /LIFEGUARD_FENCING_ALLOW_LOOPBACK/);
    assert.equal(parse(text, { allowLoopback: true }).hosts.length, 1);
  });

  it('refuses noop unless explicitly allowed', () => {
    const text = 'FencingConfig:\n  compute-0: { agent: noop }\n';
    assert.throws(() => parse(text), /LIFEGUARD_FENCING_ALLOW_NOOP=true/);
    assert.equal(parse(text, { allowNoop: true }).find('compute-0')?.methods[0]?.kind, 'noop');
  });

  it('reports a missing fence agent once, naming every host (and topology method) that uses it', () => {
    const agentsDirectory = mkdtempSync(join(tmpdir(), 'no-fence-agents-'));
    try {
      const hosts = Array.from({ length: 12 }, (_, index) => `compute-${String(index + 1).padStart(2, '0')}`);
      const text = [
        'FencingConfig:',
        ...hosts.map(
          (host) => `  ${host}: { agent: fence_redfish, ipaddr: 192.0.2.1, login: admin, passwd: secret }`,
        ),
        '  storage-1:',
        '    methods:',
        '      - { agent: ipmi, ipaddr: 192.0.2.9, ipport: 623, login: admin, passwd: secret }',
        '      - { agent: fence_ipmilan, ipaddr: 192.0.2.9, login: admin, passwd: secret }',
        '  storage-2: { agent: fence_ipmilan, ipaddr: 192.0.2.10, login: admin, passwd: secret }',
      ].join('\n');
      const error = configErrorOf(() => parse(text, { fenceAgentsDirectory: agentsDirectory }));
      assert.equal(error.problems.length, 2, error.message);
      const [redfish, ipmilan] = error.problems;
      assert.equal(redfish!.key, 'FencingConfig.compute-01.agent');
      assert.equal(
        redfish!.problem,
        `${join(agentsDirectory, 'fence_redfish')} is not installed or not executable (install fence-agents); ` +
          `used by 12 hosts: ${hosts.join(', ')}`,
      );
      assert.equal(ipmilan!.key, 'FencingConfig.storage-1.methods.1.agent');
      assert.match(
        ipmilan!.problem,
        /fence_ipmilan is not installed .*; used by 2 hosts: storage-1, storage-2$/,
      );
      assert.equal(error.message.match(/is not installed/g)?.length, 2, 'one sentence per program');
    } finally {
      rmSync(agentsDirectory, { recursive: true });
    }
  });

  it('refuses fence agents that do not cut power, missing agents, and managed or secret option keys', () => {
    assert.throws(
      () => parse('FencingConfig:\n  compute-0: { agent: fence_compute, ipaddr: 192.0.2.1 }\n'),
      /fence_compute does not cut power/,
    );
    assert.throws(
      () => parse('FencingConfig:\n  compute-0: { agent: fence_nothing_like_this }\n'),
      /fence_nothing_like_this is not installed/,
    );
    const error = configErrorOf(() =>
      parse(`
FencingConfig:
  compute-0:
    agent: fence_ipmilan
    ipaddr: 192.0.2.1
    options: { password: hidden-in-options, action: reboot }
`),
    );
    assert.match(error.message, /options\.password/);
    assert.match(error.message, /options\.action/);
    assert.doesNotMatch(error.message, /hidden-in-options/);
  });

  it('accepts an identity only where lifeguard can read it', () => {
    assert.throws(
      () =>
        parse(`
FencingConfig:
  compute-0:
    agent: fence_virsh
    ipaddr: 192.0.2.1
    login: root
    passwd: p
    plug: instance-0001
    expected_guid: 00112233445566778899aabbccddeeff
`),
      /expected_guid .*only checked for IPMI agents/,
    );
  });

  it('an unknown host is a configuration error that is not recoverable', async () => {
    const configuration = parse('FencingConfig: {}\n');
    const logger = createLogger({ service: 'test', level: 'silent' });
    const fencer = new HostFencer(configuration, { logger, secrets: [], allowNoop: false });
    await assert.rejects(fencer.powerOff('compute-9'), (error: unknown) => {
      assert.ok(error instanceof FencingConfigurationError);
      assert.equal(error.recoverable, false);
      assert.match(error.message, /compute-9 has no entry in fencing\.yaml/);
      return true;
    });
  });

  it('compares identities in any standard GUID byte order, and nothing else', () => {
    const printed = '33221100554477668899aabbccddeeff';
    assert.ok(sameIdentity(printed, printed));
    assert.ok(sameIdentity('00112233445566778899aabbccddeeff', printed), 'first three fields little-endian');
    assert.ok(sameIdentity('ffeeddccbbaa99887766554433221100', printed), 'fully reversed');
    assert.ok(!sameIdentity('00112233445566778899aabbccddeefe', printed));
  });

  it('the noop driver refuses to run unless allowed, even when constructed directly, and never reports a verified power-off', async () => {
    const logger = createLogger({ service: 'test', level: 'silent' });
    const method = { kind: 'noop', index: 0, name: 'noop', timeoutSeconds: 30 } as const;
    await assert.rejects(
      new NoopDriver(method, { logger, secrets: [], allowNoop: false }).powerOff(),
      (error) => {
        assert.ok(error instanceof FencingConfigurationError);
        assert.match(error.message, /LIFEGUARD_FENCING_ALLOW_NOOP=true/);
        return true;
      },
    );
    assert.deepEqual(await new NoopDriver(method, { logger, secrets: [], allowNoop: true }).powerOff(), {
      alreadyOff: false,
      attempts: 1,
      verified: false,
    });
  });

  it('loads the file, and a missing file stops start-up naming the path and FENCING_CONFIG_PATH', () => {
    const directory = mkdtempSync(join(tmpdir(), 'lifeguard-fencing-config-'));
    const path = join(directory, 'fencing.yaml');
    writeFileSync(
      path,
      'FencingConfig:\n  compute-0: { agent: ipmi, ipaddr: 192.0.2.1, ipport: 623, login: a, passwd: p }\n',
    );
    assert.equal(loadFencingConfig(path, options).hosts.length, 1);
    assert.throws(
      () => loadFencingConfig(join(directory, 'absent.yaml'), options),
      /invalid configuration: FENCING_CONFIG_PATH \(\/.*\/absent\.yaml\): cannot read file: ENOENT \(no such file\)$/,
    );
    rmSync(directory, { recursive: true, force: true });
  });
});
