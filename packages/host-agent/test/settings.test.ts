import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { HostAgentConfigError, loadHostAgentSettings, parseMonitor } from '../src/index.ts';

const directory = mkdtempSync(join(tmpdir(), 'host-agent-settings-'));
const keyPath = join(directory, 'hmac-key');
writeFileSync(keyPath, `${'ab'.repeat(32)}\n`);
// A /proc as a container mounts the host's (HOST_AGENT_PROC_PATH): numbered process folders.
const hostProc = join(directory, 'host-proc');
mkdirSync(join(hostProc, '1'), { recursive: true });
const notProc = join(directory, 'not-proc');
mkdirSync(join(notProc, 'etc'), { recursive: true });
const base = {
  HOST_AGENT_HOST: 'compute-1',
  HEARTBEAT_HMAC_KEY_PATH: keyPath,
  HEARTBEAT_NETWORK_MANAGEMENT: '10.0.0.5,10.0.0.6:7500',
};

/** The keys a configuration error names. */
function refusedKeys(env: NodeJS.ProcessEnv): string[] {
  try {
    loadHostAgentSettings(env);
  } catch (error) {
    assert.ok(error instanceof HostAgentConfigError, String(error));
    return error.problems.map((each) => each.key);
  }
  assert.fail('the configuration was accepted');
}

describe('host agent settings', () => {
  it('reads the host, the interval, the key, each network with its monitors and source, the watched processes and where /proc is', () => {
    const settings = loadHostAgentSettings({
      ...base,
      HEARTBEAT_NETWORK_STORAGE: '[fd00::5]:7411, storage-monitor from fd00::21',
      HEARTBEAT_INTERVAL: '2.5',
      HOST_AGENT_WATCHED_PROCESSES: 'nova-compute, libvirtd, ovs-vswitchd',
      HOST_AGENT_PROC_PATH: hostProc,
    });
    assert.equal(settings.host, 'compute-1');
    assert.equal(settings.procPath, hostProc);
    assert.equal(loadHostAgentSettings(base).procPath, '/proc', 'the machine’s /proc by default');
    assert.equal(settings.intervalSeconds, 2.5);
    assert.deepEqual(settings.key, Buffer.from('ab'.repeat(32), 'hex'));
    assert.deepEqual(settings.networks, [
      {
        name: 'management',
        variable: 'HEARTBEAT_NETWORK_MANAGEMENT',
        sourceAddress: null,
        monitors: [
          { host: '10.0.0.5', port: 7411 },
          { host: '10.0.0.6', port: 7500 },
        ],
      },
      {
        name: 'storage',
        variable: 'HEARTBEAT_NETWORK_STORAGE',
        sourceAddress: 'fd00::21',
        monitors: [
          { host: 'fd00::5', port: 7411 },
          { host: 'storage-monitor', port: 7411 },
        ],
      },
    ]);
    assert.deepEqual(settings.watchedProcesses, ['nova-compute', 'libvirtd', 'ovs-vswitchd']);
  });

  it('defaults: one heartbeat a second, nova-compute and libvirtd watched, health on 127.0.0.1:9405', () => {
    const settings = loadHostAgentSettings(base);
    assert.equal(settings.intervalSeconds, 1);
    assert.deepEqual(settings.watchedProcesses, ['nova-compute', 'libvirtd']);
    assert.deepEqual(settings.http, { host: '127.0.0.1', port: 9405 });
  });

  const refusals: Array<[string, NodeJS.ProcessEnv, string[]]> = [
    ['no network', { HOST_AGENT_HOST: 'c', HEARTBEAT_HMAC_KEY_PATH: keyPath }, ['HEARTBEAT_NETWORK_<NAME>']],
    ['no key file named', { ...base, HEARTBEAT_HMAC_KEY_PATH: undefined }, ['HEARTBEAT_HMAC_KEY_PATH']],
    [
      'a key file that is missing',
      { ...base, HEARTBEAT_HMAC_KEY_PATH: join(directory, 'nope') },
      ['HEARTBEAT_HMAC_KEY_PATH'],
    ],
    ['an interval under a second', { ...base, HEARTBEAT_INTERVAL: '0.5' }, ['HEARTBEAT_INTERVAL']],
    ['an interval that is not a number', { ...base, HEARTBEAT_INTERVAL: 'fast' }, ['HEARTBEAT_INTERVAL']],
    [
      'a monitor with a bad port',
      { ...base, HEARTBEAT_NETWORK_MANAGEMENT: '10.0.0.5:70000' },
      ['HEARTBEAT_NETWORK_MANAGEMENT'],
    ],
    [
      'an empty monitor list',
      { ...base, HEARTBEAT_NETWORK_MANAGEMENT: ' from 10.0.0.21' },
      ['HEARTBEAT_NETWORK_MANAGEMENT'],
    ],
    [
      'two sources',
      { ...base, HEARTBEAT_NETWORK_MANAGEMENT: 'a from b from c' },
      ['HEARTBEAT_NETWORK_MANAGEMENT'],
    ],
    ['a host name with a space', { ...base, HOST_AGENT_HOST: 'compute 1' }, ['HOST_AGENT_HOST']],
    [
      'a watched process with a space',
      { ...base, HOST_AGENT_WATCHED_PROCESSES: 'nova compute' },
      ['HOST_AGENT_WATCHED_PROCESSES'],
    ],
    ['a health port out of range', { ...base, LIFEGUARD_HTTP_PORT: '99999' }, ['LIFEGUARD_HTTP_PORT']],
    ['a relative /proc path', { ...base, HOST_AGENT_PROC_PATH: 'proc' }, ['HOST_AGENT_PROC_PATH']],
    [
      'a /proc path that does not exist',
      { ...base, HOST_AGENT_PROC_PATH: '/nope' },
      ['HOST_AGENT_PROC_PATH'],
    ],
    ['a /proc path to a file', { ...base, HOST_AGENT_PROC_PATH: keyPath }, ['HOST_AGENT_PROC_PATH']],
    [
      'a /proc path to a folder without process folders',
      { ...base, HOST_AGENT_PROC_PATH: notProc },
      ['HOST_AGENT_PROC_PATH'],
    ],
    ['an interval in exponent notation', { ...base, HEARTBEAT_INTERVAL: '1e1' }, ['HEARTBEAT_INTERVAL']],
    [
      'a health address that is not an address',
      { ...base, LIFEGUARD_HTTP_HOST: 'my host' },
      ['LIFEGUARD_HTTP_HOST'],
    ],
    [
      'two variables naming one network (differing in case)',
      { ...base, HEARTBEAT_NETWORK_management: '10.0.0.7' },
      // The second in sorted order is refused; its error names the first.
      ['HEARTBEAT_NETWORK_MANAGEMENT'],
    ],
    [
      'a network name over 40 characters',
      { ...base, [`HEARTBEAT_NETWORK_${'N'.repeat(41)}`]: '10.0.0.7' },
      [`HEARTBEAT_NETWORK_${'N'.repeat(41)}`],
    ],
  ];
  for (const [name, env, keys] of refusals) {
    it(`refuses ${name}, naming ${keys.join(', ')}`, () => {
      assert.deepEqual(refusedKeys(env), keys);
    });
  }

  it('refuses a key file that is not hex or shorter than 16 bytes: never an unsigned or weak heartbeat', () => {
    const notHex = join(directory, 'not-hex');
    writeFileSync(notHex, 'secret words');
    const short = join(directory, 'short');
    writeFileSync(short, 'abcd');
    for (const path of [notHex, short]) {
      assert.throws(
        () => loadHostAgentSettings({ ...base, HEARTBEAT_HMAC_KEY_PATH: path }),
        (error: Error) =>
          error instanceof HostAgentConfigError && error.message.includes('HEARTBEAT_HMAC_KEY_PATH'),
      );
    }
  });

  it('reads monitors as host, host:port, [v6] or [v6]:port', () => {
    assert.deepEqual(parseMonitor('monitor-1'), { host: 'monitor-1', port: 7411 });
    assert.deepEqual(parseMonitor('10.0.0.5:7412'), { host: '10.0.0.5', port: 7412 });
    assert.deepEqual(parseMonitor('[::1]'), { host: '::1', port: 7411 });
    assert.deepEqual(parseMonitor('[fd00::5]:9'), { host: 'fd00::5', port: 9 });
    for (const bad of ['::1', '10.0.0.5:0', 'a b', '[::1', 'host:port'])
      assert.equal(parseMonitor(bad), null, bad);
  });
});
