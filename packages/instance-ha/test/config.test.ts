import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError } from '@lifeguard/runtime';
import {
  DEFAULT_CONFIG_PATH,
  INSTANCE_HA_KEYS,
  LIFEGUARD_BOOLEAN_KEYS,
  LIFEGUARD_INTEGER_KEYS,
  LIFEGUARD_LIST_KEYS,
  loadInstanceHaConfig,
  migrationWindowMinutes,
  PORT_KEYS,
  perHostEvacuationConcurrency,
  pollRetrySeconds,
  processingExpirySeconds,
} from '../src/index.ts';

const directory = mkdtempSync(join(tmpdir(), 'instance-ha-config-'));
let counter = 0;
function file(text: string): string {
  const path = join(directory, `config-${counter++}.yaml`);
  writeFileSync(path, text);
  return path;
}
const load = (text: string, env: NodeJS.ProcessEnv = {}) => loadInstanceHaConfig({ path: file(text), env });

// InstanceHA's shipped template (openstack-k8s-operators infra-operator): every value quoted.
const SHIPPED_TEMPLATE = `config:
  EVACUABLE_TAG: "evacuable"
  TAGGED_IMAGES: "true"
  TAGGED_FLAVORS: "true"
  TAGGED_AGGREGATES: "true"
  SMART_EVACUATION: "false"
  DELTA: "30"
  DELAY: "0"
  POLL: "45"
  THRESHOLD: "50"
  WORKERS: "4"
  RESERVED_HOSTS: "false"
  LEAVE_DISABLED: "false"
  FORCE_ENABLE: "false"
  CHECK_KDUMP: "false"
  KDUMP_TIMEOUT: "30"
  LOGLEVEL: "info"
  DISABLED: "false"
  SSL_VERIFY: "true"
  FENCING_TIMEOUT: "30"
  HASH_INTERVAL: "60"
  WATCHDOG_TIMEOUT: "60"
`;

describe('InstanceHA config.yaml (docs/instance-ha-rules.md#configuration-files, docs/instance-ha-rules.md#configuration-keys)', () => {
  after(() => rmSync(directory, { recursive: true, force: true }));

  it('loads the shipped template unchanged: defaults, no warnings, WATCHDOG_TIMEOUT accepted as unused', () => {
    const loaded = load(SHIPPED_TEMPLATE);
    assert.deepEqual(loaded.warnings, []);
    assert.deepEqual(loaded.unknownKeys, []);
    assert.deepEqual(loaded.unusedKeys, ['WATCHDOG_TIMEOUT']);
    assert.equal(loaded.config.pollSeconds, 45);
    assert.equal(loaded.config.deltaSeconds, 30);
    assert.equal(loaded.config.logLevel, 'INFO');
    assert.equal(loaded.config.pinoLogLevel, 'info');
    assert.equal(loaded.config.taggedAggregates, true);
    assert.equal(loaded.sources.POLL, 'file');
  });

  it('gives every key of docs/instance-ha-rules.md#configuration-keys its default when the file is empty', () => {
    const { config, warnings } = load('config: {}\n');
    assert.deepEqual(warnings, []);
    const expected = {
      pollSeconds: 45,
      deltaSeconds: 30,
      thresholdPercent: 50,
      maxHostsPerCycle: 10,
      k8sApiCheckIntervalSeconds: 15,
      thresholdSuspectAgeSeconds: 15,
      massEventHoldDownSeconds: 60,
      heartbeatDownAfterSeconds: 3,
      novaReportIntervalSeconds: 10,
      heartbeatDetection: false,
      workers: 4,
      delaySeconds: 0,
      evacuationMaxThreads: 32,
      evacuationRetries: 5,
      evacuationStaggerSeconds: 0,
      evacuationTimeoutSeconds: 300,
      smartEvacuation: false,
      orchestratedRestart: false,
      evacuableTag: 'evacuable',
      taggedImages: true,
      taggedFlavors: true,
      taggedAggregates: true,
      skipServersWithName: [],
      reservedHosts: false,
      forceReservedHostEvacuation: false,
      leaveDisabled: false,
      forceEnable: false,
      checkKdump: false,
      kdumpTimeoutSeconds: 30,
      checkHeartbeat: false,
      heartbeatTimeoutSeconds: 120,
      heartbeatCliffThresholdPercent: 50,
      heartbeatCliffMaxCycles: 3,
      fencingTimeoutSeconds: 30,
      sslVerify: true,
      disabled: false,
      logLevel: 'INFO',
      pinoLogLevel: 'info',
      hashIntervalSeconds: 60,
      sslCaBundle: null,
      sslCertPath: null,
      sslKeyPath: null,
      kdumpPort: 7410,
      heartbeatPort: 7411,
      skipServersInProject: [],
      skipServersWithTag: [],
      skipServersWithMetadata: [],
    };
    const { kdumpAddressMap, ...rest } = config;
    assert.deepEqual(rest, expected);
    assert.equal(kdumpAddressMap.size, 0);
    assert.equal(Object.keys(INSTANCE_HA_KEYS).length, 36);
  });

  it('fills one config field per key of the table, from the key given in the file or the environment, and no other', () => {
    const table = {
      ...INSTANCE_HA_KEYS,
      ...PORT_KEYS,
      ...LIFEGUARD_INTEGER_KEYS,
      ...LIFEGUARD_BOOLEAN_KEYS,
      ...LIFEGUARD_LIST_KEYS,
    };
    const fields = Object.values(table).map((key) => key.field);
    assert.equal(new Set(fields).size, fields.length, 'no two keys fill the same field');
    const { config } = load('config: {}\n');
    assert.deepEqual(Object.keys(config).sort(), [...fields, 'pinoLogLevel', 'kdumpAddressMap'].sort());
    for (const [name, key] of Object.entries(table)) {
      if (key.kind !== 'integer') continue;
      const inside = key.default === key.maximum ? key.maximum - 1 : key.default + 1;
      const fromFile = load(`config:\n  ${name}: "${inside}"\n`);
      assert.equal(fromFile.config[key.field], inside, name);
      assert.equal(fromFile.sources[name], 'file', name);
      const fromEnvironment = load('config: {}\n', { [name]: String(inside) });
      assert.equal(fromEnvironment.config[key.field], inside, name);
    }
  });

  it('clamps out-of-range integers to the range with a warning naming the key and the file', () => {
    const path = file('config:\n  POLL: "5"\n  DELTA: 1000\n  THRESHOLD: -3\n  MAX_HOSTS_PER_CYCLE: "500"\n');
    const { config, warnings } = loadInstanceHaConfig({ path, env: {} });
    assert.equal(config.pollSeconds, 15);
    assert.equal(config.deltaSeconds, 300);
    assert.equal(config.thresholdPercent, 0);
    assert.equal(config.maxHostsPerCycle, 200);
    assert.deepEqual(
      warnings.map((warning) => [warning.key, warning.source]),
      [
        ['POLL', path],
        ['DELTA', path],
        ['THRESHOLD', path],
        ['MAX_HOSTS_PER_CYCLE', path],
      ],
    );
    assert.match(warnings[0]!.problem, /out of range 15–600 seconds; clamped to 15/);
  });

  it('replaces an unparsable integer by the default with a warning naming the key (wrong type)', () => {
    const path = file(
      'config:\n  POLL: "forty"\n  DELTA: [1, 2]\n  WORKERS: true\n  KDUMP_TIMEOUT: "12.5"\n',
    );
    const { config, warnings } = loadInstanceHaConfig({ path, env: {} });
    assert.equal(config.pollSeconds, 45);
    assert.equal(config.deltaSeconds, 30);
    assert.equal(config.workers, 4);
    assert.equal(config.kdumpTimeoutSeconds, 30);
    assert.deepEqual(
      warnings.map((warning) => warning.key),
      ['POLL', 'DELTA', 'WORKERS', 'KDUMP_TIMEOUT'],
    );
    assert.match(warnings[0]!.problem, /not an integer \(seconds\); using the default 45/);
    assert.equal(warnings[0]!.value, '"forty"');
    assert.equal(warnings[0]!.source, path);
  });

  it('parses integers as Python int(): spaces, signs, underscores; YAML floats truncate', () => {
    const { config, warnings } = load(
      'config:\n  POLL: " 60 "\n  DELTA: "+40"\n  EVACUATION_TIMEOUT: "1_000"\n  DELAY: 7.9\n',
    );
    assert.deepEqual(warnings, []);
    assert.equal(config.pollSeconds, 60);
    assert.equal(config.deltaSeconds, 40);
    assert.equal(config.evacuationTimeoutSeconds, 1000);
    assert.equal(config.delaySeconds, 7);
  });

  it('reads booleans from YAML booleans and the strings true/1/yes/on/enabled (any case); other strings are false', () => {
    const truthy = ['true', 'True', '1', 'yes', 'YES', 'on', 'enabled', ' On '];
    for (const value of truthy) {
      assert.equal(load(`config:\n  DISABLED: "${value}"\n`).config.disabled, true, value);
    }
    for (const value of ['false', '0', 'no', 'off', 'disabled', 'nope', '']) {
      assert.equal(load(`config:\n  SSL_VERIFY: "${value}"\n`).config.sslVerify, false, value);
    }
    for (const value of ['false', 'False', '0', 'no', 'off', 'disabled', ' Off ']) {
      assert.deepEqual(load(`config:\n  SSL_VERIFY: "${value}"\n`).warnings, [], value);
    }
    assert.equal(load('config:\n  DISABLED: true\n').config.disabled, true);
    assert.equal(load('config:\n  SSL_VERIFY: false\n').config.sslVerify, false);
  });

  it('keeps a misspelt boolean false, as InstanceHA does, with a warning naming the key, the value and what it was read as', () => {
    const path = file('config:\n  DISABLED: yes please\n  TAGGED_AGGREGATES: nope\n  SSL_VERIFY: ""\n');
    const { config, warnings } = loadInstanceHaConfig({ path, env: { CHECK_KDUMP: 'ture' } });
    assert.equal(config.disabled, false);
    assert.equal(config.taggedAggregates, false);
    assert.equal(config.sslVerify, false);
    assert.equal(config.checkKdump, false);
    assert.deepEqual(
      warnings.map((warning) => [warning.key, warning.value, warning.source]),
      [
        ['TAGGED_AGGREGATES', '"nope"', path],
        ['CHECK_KDUMP', '"ture"', 'environment'],
        ['SSL_VERIFY', '""', path],
        ['DISABLED', '"yes please"', path],
      ],
    );
    for (const warning of warnings) assert.match(warning.problem, /read as false/);
  });

  it('gives a boolean of another type (a number, a list) its default with a warning', () => {
    const { config, warnings } = load('config:\n  CHECK_KDUMP: 1\n  SSL_VERIFY: [true]\n');
    assert.equal(config.checkKdump, false);
    assert.equal(config.sslVerify, true);
    assert.deepEqual(
      warnings.map((warning) => warning.key),
      ['CHECK_KDUMP', 'SSL_VERIFY'],
    );
  });

  it('reads SKIP_SERVERS_WITH_NAME from a YAML list or a comma-separated string (trimmed)', () => {
    assert.deepEqual(
      load('config:\n  SKIP_SERVERS_WITH_NAME: ["test-*", "tmp?"]\n').config.skipServersWithName,
      ['test-*', 'tmp?'],
    );
    assert.deepEqual(
      load('config:\n  SKIP_SERVERS_WITH_NAME: " test-* , tmp?,,"\n').config.skipServersWithName,
      ['test-*', 'tmp?'],
    );
    assert.deepEqual(load('config:\n  SKIP_SERVERS_WITH_NAME:\n').config.skipServersWithName, []);
  });

  it('reads the server exclusions SKIP_SERVERS_IN_PROJECT, SKIP_SERVERS_WITH_TAG and SKIP_SERVERS_WITH_METADATA as lists', () => {
    const { config } = load(
      'config:\n  SKIP_SERVERS_IN_PROJECT: [p-1, p-2]\n  SKIP_SERVERS_WITH_TAG: "amphora, router"\n  SKIP_SERVERS_WITH_METADATA: ["owner=trove", "ha=off=really"]\n',
    );
    assert.deepEqual(config.skipServersInProject, ['p-1', 'p-2']);
    assert.deepEqual(config.skipServersWithTag, ['amphora', 'router']);
    assert.deepEqual(config.skipServersWithMetadata, ['owner=trove', 'ha=off=really']);
    const fromEnvironment = load('config: {}\n', { SKIP_SERVERS_WITH_TAG: 'octavia' });
    assert.deepEqual(fromEnvironment.config.skipServersWithTag, ['octavia']);
  });

  it('stops start-up on a SKIP_SERVERS_WITH_METADATA item that is not key=value, naming the key and the item', () => {
    for (const item of ['owner', '=trove']) {
      assert.throws(
        () => load(`config:\n  SKIP_SERVERS_WITH_METADATA: ["a=b", "${item}"]\n`),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message.includes('SKIP_SERVERS_WITH_METADATA') &&
          error.message.includes(JSON.stringify(item)) &&
          !error.message.includes('"a=b"'),
        item,
      );
    }
  });

  it('upper-cases LOGLEVEL and maps it to pino (WARNING → warn, CRITICAL → fatal)', () => {
    assert.equal(load('config:\n  LOGLEVEL: warning\n').config.pinoLogLevel, 'warn');
    assert.equal(load('config:\n  LOGLEVEL: CRITICAL\n').config.pinoLogLevel, 'fatal');
    assert.equal(load('config:\n  LOGLEVEL: debug\n').config.logLevel, 'DEBUG');
  });

  it('stops start-up on a bad LOGLEVEL, naming the key and the file', () => {
    const path = file('config:\n  LOGLEVEL: verbose\n');
    assert.throws(
      () => loadInstanceHaConfig({ path, env: {} }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.problems[0]!.key === 'LOGLEVEL' &&
        error.problems[0]!.source === path &&
        /must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL/.test(error.message),
    );
  });

  it('stops start-up on a YAML syntax error or a non-mapping, naming the file', () => {
    const broken = file('config:\n  POLL: "45\n  DELTA: 30\n');
    assert.throws(
      () => loadInstanceHaConfig({ path: broken, env: {} }),
      (error: unknown) => {
        return (
          error instanceof ConfigError &&
          error.problems[0]!.source === broken &&
          /not valid YAML/.test(error.message)
        );
      },
    );
    const list = file('- POLL\n- DELTA\n');
    assert.throws(() => loadInstanceHaConfig({ path: list, env: {} }), /the top level must be a mapping/);
    const scalarConfig = file('config: "POLL=45"\n');
    assert.throws(
      () => loadInstanceHaConfig({ path: scalarConfig, env: {} }),
      (error: unknown) => error instanceof ConfigError && error.problems[0]!.key === 'config',
    );
  });

  it('stops start-up on settings outside the "config:" mapping, naming the key (a misspelt config:, keys at the top level, or keys beside config:)', () => {
    const cases: Array<[yaml: string, key: string, problem: RegExp]> = [
      ['confg:\n  THRESHOLD: "20"\n', 'confg', /did you mean config\?.*none of its settings would be used/],
      ['Config:\n  THRESHOLD: "20"\n', 'Config', /did you mean config\?/],
      ['THRESHOLD: "20"\nPOLL: "30"\n', 'POLL', /top-level keys \(POLL, THRESHOLD\) would not be used/],
      [
        'config:\n  THRESHOLD: "20"\nDISABLED: "true"\n',
        'DISABLED',
        /top-level key beside "config:" \(DISABLED\).*move it under "config:"/,
      ],
      ['confg:\n  POLL: "30"\nconfig:\n  THRESHOLD: "20"\n', 'confg', /beside "config:" \(confg\)/],
      ['config:\nDISABLED: "true"\n', 'DISABLED', /beside "config:" \(DISABLED\)/],
    ];
    for (const [yaml, key, problem] of cases) {
      const path = file(yaml);
      assert.throws(
        () => loadInstanceHaConfig({ path, env: {} }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.problems[0]!.key === key &&
          error.problems[0]!.source === path &&
          problem.test(error.problems[0]!.problem),
        yaml,
      );
    }
  });

  it('uses the defaults with a warning for an empty "config:" mapping', () => {
    const loaded = load('config:\n');
    assert.equal(loaded.config.thresholdPercent, 50);
    assert.equal(loaded.config.pollSeconds, 45);
    assert.match(loaded.warnings[0]!.problem, /no "config:" mapping/);
  });

  it('uses the defaults with a warning when the file is missing', () => {
    const path = join(directory, 'absent.yaml');
    const loaded = loadInstanceHaConfig({ path, env: {} });
    assert.equal(loaded.fileFound, false);
    assert.equal(loaded.config.pollSeconds, 45);
    assert.equal(loaded.warnings.length, 1);
    assert.match(loaded.warnings[0]!.problem, /not found/);
  });

  it('accepts keys it does not know and reports each once', () => {
    const loaded = load('config:\n  POLL: "45"\n  MY_OWN_KEY: "x"\n  OTHER: 1\n');
    assert.deepEqual(loaded.unknownKeys, ['MY_OWN_KEY', 'OTHER']);
    assert.deepEqual(loaded.warnings, []);
  });

  it('warns of an unknown key that misspells a known one, naming the key meant, which keeps its value', () => {
    const loaded = load(
      'config:\n  THRESHHOLD: "10"\n  poll: "60"\n  SMART_EVACUATON: "true"\n  MY_OWN_KEY: "x"\n',
    );
    assert.deepEqual(loaded.unknownKeys, ['THRESHHOLD', 'poll', 'SMART_EVACUATON', 'MY_OWN_KEY']);
    assert.deepEqual(
      loaded.warnings.map((warning) => [warning.key, warning.problem]),
      [
        [
          'THRESHHOLD',
          'not a key lifeguard or InstanceHA knows, and ignored: did you mean THRESHOLD? THRESHOLD keeps the value it has without it',
        ],
        [
          'poll',
          'not a key lifeguard or InstanceHA knows, and ignored: did you mean POLL? POLL keeps the value it has without it',
        ],
        [
          'SMART_EVACUATON',
          'not a key lifeguard or InstanceHA knows, and ignored: did you mean SMART_EVACUATION? SMART_EVACUATION keeps the value it has without it',
        ],
      ],
    );
    assert.equal(loaded.config.thresholdPercent, 50, 'THRESHOLD keeps its default');
    assert.equal(loaded.config.pollSeconds, 45, 'POLL keeps its default');
    assert.equal(loaded.config.smartEvacuation, false);
  });

  it('lets the environment override every key with the same name, with the same parsing rules', () => {
    const path = file('config:\n  POLL: "60"\n  TAGGED_IMAGES: "true"\n  SKIP_SERVERS_WITH_NAME: "a"\n');
    const loaded = loadInstanceHaConfig({
      path,
      env: {
        POLL: '20',
        TAGGED_IMAGES: 'no',
        SKIP_SERVERS_WITH_NAME: 'x-*,y-*',
        DELTA: '9999',
        LOGLEVEL: 'error',
      },
    });
    assert.equal(loaded.config.pollSeconds, 20);
    assert.equal(loaded.config.taggedImages, false);
    assert.deepEqual(loaded.config.skipServersWithName, ['x-*', 'y-*']);
    assert.equal(loaded.config.deltaSeconds, 300);
    assert.equal(loaded.config.logLevel, 'ERROR');
    assert.equal(loaded.sources.POLL, 'environment');
    assert.deepEqual(
      loaded.warnings.map((warning) => [warning.key, warning.source]),
      [['DELTA', 'environment']],
    );
    // an empty variable counts as unset
    assert.equal(loadInstanceHaConfig({ path, env: { POLL: '' } }).config.pollSeconds, 60);
  });

  it('forces DISABLED only when INSTANCEHA_DISABLED is exactly "True" (docs/instance-ha-rules.md#environment)', () => {
    const enabled = file('config:\n  DISABLED: "false"\n');
    const disabled = file('config:\n  DISABLED: "true"\n');
    assert.equal(
      loadInstanceHaConfig({ path: enabled, env: { INSTANCEHA_DISABLED: 'True' } }).config.disabled,
      true,
    );
    assert.equal(
      loadInstanceHaConfig({ path: enabled, env: { INSTANCEHA_DISABLED: 'true' } }).config.disabled,
      false,
    );
    assert.equal(
      loadInstanceHaConfig({ path: enabled, env: { INSTANCEHA_DISABLED: 'False' } }).config.disabled,
      false,
    );
    assert.equal(
      loadInstanceHaConfig({ path: disabled, env: { INSTANCEHA_DISABLED: 'False' } }).config.disabled,
      true,
    );
    assert.equal(loadInstanceHaConfig({ path: disabled, env: {} }).config.disabled, true);
  });

  it('reads the path from INSTANCEHA_CONFIG_PATH, else /var/lib/instanceha/config.yaml', () => {
    const path = file('config:\n  POLL: "90"\n');
    const loaded = loadInstanceHaConfig({ env: { INSTANCEHA_CONFIG_PATH: path } });
    assert.equal(loaded.path, path);
    assert.equal(loaded.config.pollSeconds, 90);
    assert.equal(DEFAULT_CONFIG_PATH, '/var/lib/instanceha/config.yaml');
  });

  it('takes the kdump and heartbeat ports from UDP_PORT / HEARTBEAT_PORT; invalid → default with a warning', () => {
    assert.equal(load('config: {}\n', { UDP_PORT: '17410' }).config.kdumpPort, 17410);
    const bad = load('config: {}\n', { UDP_PORT: '70000', HEARTBEAT_PORT: 'x' });
    assert.equal(bad.config.kdumpPort, 7410);
    assert.equal(bad.config.heartbeatPort, 7411);
    assert.deepEqual(
      bad.warnings.map((warning) => warning.key),
      ['UDP_PORT', 'HEARTBEAT_PORT'],
    );
  });

  it('reads KDUMP_ADDRESS_MAP as a mapping or a comma list, canonicalising addresses', () => {
    const mapping = load(
      'config:\n  KDUMP_ADDRESS_MAP:\n    "192.0.2.10": compute-0\n    "2001:DB8::0010": compute-1.example.com\n',
    );
    assert.deepEqual(
      [...mapping.config.kdumpAddressMap],
      [
        ['192.0.2.10', 'compute-0'],
        ['2001:db8::10', 'compute-1.example.com'],
      ],
    );
    const list = load('config: {}\n', {
      KDUMP_ADDRESS_MAP: '192.0.2.11=compute-2, ::ffff:192.0.2.12=compute-3',
    });
    assert.deepEqual(
      [...list.config.kdumpAddressMap],
      [
        ['192.0.2.11', 'compute-2'],
        ['192.0.2.12', 'compute-3'],
      ],
    );
  });

  it('stops start-up on an invalid KDUMP_ADDRESS_MAP, naming the entry', () => {
    const path = file('config:\n  KDUMP_ADDRESS_MAP:\n    "compute-0.example.com": compute-0\n');
    assert.throws(
      () => loadInstanceHaConfig({ path, env: {} }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.problems[0]!.key === 'KDUMP_ADDRESS_MAP.compute-0.example.com' &&
        error.problems[0]!.source === path,
    );
    assert.throws(() => load('config:\n  KDUMP_ADDRESS_MAP: [1, 2]\n'), /KDUMP_ADDRESS_MAP/);
  });

  it('replaces an empty EVACUABLE_TAG by the default (an empty tag would match every key)', () => {
    const { config, warnings } = load('config:\n  EVACUABLE_TAG: ""\n');
    assert.equal(config.evacuableTag, 'evacuable');
    assert.equal(warnings[0]!.key, 'EVACUABLE_TAG');
  });
});

describe('InstanceHA formulas derived from the configuration (docs/instance-ha-rules.md#configuration-keys)', () => {
  it('tries a failed poll again within POLL, jittered down by at most a fifth, however many failed', () => {
    for (const [pollSeconds, random, expected] of [
      [45, 0, 45],
      [45, 0.5, 40.5],
      [45, 0.999_999, 36.000_009],
      [5, 0, 5],
      [5, 0.25, 4.75],
    ] as const) {
      assert.ok(
        Math.abs(pollRetrySeconds({ pollSeconds }, () => random) - expected) < 1e-9,
        `POLL ${pollSeconds}, random ${random}`,
      );
    }
    for (let draw = 0; draw < 1000; draw++) {
      const wait = pollRetrySeconds({ pollSeconds: 45 });
      assert.ok(wait > 45 * 0.8 && wait <= 45, `${wait} within (36, 45]`);
    }
  });

  it('expires processing after max(FENCING_TIMEOUT, EVACUATION_TIMEOUT + (threads − 1) × stagger) + 30 s', () => {
    const defaults = {
      fencingTimeoutSeconds: 30,
      evacuationTimeoutSeconds: 300,
      evacuationMaxThreads: 32,
      evacuationStaggerSeconds: 0,
    };
    assert.equal(processingExpirySeconds(defaults), 330);
    assert.equal(processingExpirySeconds({ ...defaults, evacuationStaggerSeconds: 2 }), 300 + 31 * 2 + 30);
  });

  it('uses a migration window of max(5, (EVACUATION_TIMEOUT + 120) // 60) minutes', () => {
    assert.equal(migrationWindowMinutes({ evacuationTimeoutSeconds: 60 }), 5);
    assert.equal(migrationWindowMinutes({ evacuationTimeoutSeconds: 300 }), 7);
    assert.equal(migrationWindowMinutes({ evacuationTimeoutSeconds: 3600 }), 62);
  });

  it('runs max(1, EVACUATION_MAX_THREADS ÷ WORKERS) evacuations per host', () => {
    assert.equal(perHostEvacuationConcurrency({ evacuationMaxThreads: 32, workers: 4 }), 8);
    assert.equal(perHostEvacuationConcurrency({ evacuationMaxThreads: 3, workers: 4 }), 1);
  });
});

describe('short intervals for labs and tests', () => {
  it('keeps values below the minimum (≥ 1) with a warning only when allowBelowMinimum is set', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'instance-ha-short-')), 'config.yaml');
    writeFileSync(path, 'config:\n  POLL: "2"\n  DELTA: "3"\n  THRESHOLD: "150"\n  KDUMP_TIMEOUT: "0"\n');
    const clamped = loadInstanceHaConfig({ path, env: {} });
    assert.equal(clamped.config.pollSeconds, 15);
    const short = loadInstanceHaConfig({ path, env: {}, allowBelowMinimum: true });
    assert.equal(short.config.pollSeconds, 2);
    assert.equal(short.config.deltaSeconds, 3);
    assert.equal(short.config.thresholdPercent, 100, 'above the maximum is still clamped');
    assert.equal(short.config.kdumpTimeoutSeconds, 5, 'below 1 is still clamped');
    assert.match(short.warnings[0]!.problem, /below InstanceHA's minimum 15 seconds; kept/);
  });

  it('takes the switch from LIFEGUARD_UNSAFE_SHORT_INTERVALS, so every worker applies the same ranges', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'instance-ha-short-')), 'config.yaml');
    writeFileSync(path, 'config:\n  POLL: "2"\n');
    assert.equal(
      loadInstanceHaConfig({ path, env: { LIFEGUARD_UNSAFE_SHORT_INTERVALS: 'true' } }).config.pollSeconds,
      2,
    );
    assert.equal(
      loadInstanceHaConfig({ path, env: { LIFEGUARD_UNSAFE_SHORT_INTERVALS: 'no' } }).config.pollSeconds,
      15,
    );
    assert.equal(
      loadInstanceHaConfig({
        path,
        env: { LIFEGUARD_UNSAFE_SHORT_INTERVALS: 'true' },
        allowBelowMinimum: false,
      }).config.pollSeconds,
      15,
      'an explicit option wins',
    );
    assert.throws(
      () => loadInstanceHaConfig({ path, env: { LIFEGUARD_UNSAFE_SHORT_INTERVALS: 'sometimes' } }),
      /LIFEGUARD_UNSAFE_SHORT_INTERVALS \(environment\): must be true or false; got "sometimes"/,
    );
  });
});
