import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '@lifeguard/runtime';
import { CapturedLines } from '@lifeguard/testing';
import { FenceIdentityMismatchError, FencingFailedError, type HostFencer } from '../src/index.ts';
import { type IpmiSimulator, startIpmiSimulator } from './support/ipmi-simulator.ts';
import { loopbackFencer } from './support/loopback-fencer.ts';

const captured = new CapturedLines();
const logger = createLogger({ service: 'fencing-worker-test', level: 'debug', destination: captured });

/** A HostFencer over fencing.yaml text (loopback BMCs allowed: the simulators run on 127.0.0.1). */
function fencerFor(yamlText: string, hooks: { onSpawn?: (pid: number) => void } = {}): HostFencer {
  return loopbackFencer(yamlText, logger, hooks);
}

/** A native `ipmi` entry for a simulator; `cipher: 3` spares ipmitool its cipher-suite probe. */
const ipmiEntry = (sim: IpmiSimulator, extra = '') => `
    agent: ipmi
    ipaddr: ${sim.address}
    ipport: "${sim.port}"
    login: ${sim.login}
    passwd: "${sim.password}"
    cipher: 3
    timeout: 10${extra}`;

const fenceIpmilanEntry = (sim: IpmiSimulator, password = sim.password) => `
    agent: fence_ipmilan
    ipaddr: ${sim.address}
    ipport: ${sim.port}
    login: ${sim.login}
    passwd: "${password}"
    timeout: 30
    options: { lanplus: 1, cipher: 3 }`;

/** An entry as an item of a `methods:` list (6 spaces for the dash, 8 for its keys). */
const listItem = (entry: string, extra: string[] = []) =>
  [...entry.trim().split('\n'), ...extra]
    .map((line, index) => `${index === 0 ? '      - ' : '        '}${line.trim()}`)
    .join('\n');

describe('fencing through IPMI against ipmi_sim', () => {
  const simulators: IpmiSimulator[] = [];
  const start = async (options: Parameters<typeof startIpmiSimulator>[0] = {}) => {
    const sim = await startIpmiSimulator(options);
    simulators.push(sim);
    return sim;
  };
  let passwords: string[] = [];

  before(async () => {
    // Passwords with quotes, "=" and "#" (at most 20 bytes, the IPMI v2 limit; ipmi_sim's lan.conf
    // holds neither spaces nor double quotes): they must survive the stdin protocol and never leak.
    const random = () => Math.random().toString(36).slice(2, 8);
    passwords = [`p'q'${random()}`, `=x#'${random()}'`];
  });

  after(async () => {
    await Promise.all(simulators.map((sim) => sim.stop()));
    const text = captured.text;
    for (const password of [...passwords, ...simulators.map((sim) => sim.password)]) {
      assert.ok(!text.includes(password), 'a BMC password appeared in a log line');
    }
  });

  it('the native ipmi driver powers the host off and confirms it', async () => {
    const sim = await start({ password: passwords[0] });
    const fencer = fencerFor(`FencingConfig:\n  compute-0:${ipmiEntry(sim)}\n`);
    const result = await fencer.powerOff('compute-0.example.com');
    assert.equal(result.method, 'ipmi');
    assert.equal(result.methodIndex, 0);
    assert.equal(sim.power(), 'off');
    assert.deepEqual(sim.powerCommands(), ['0']);
    assert.deepEqual(await fencer.powerStatus('compute-0'), { method: 'ipmi', state: 'off' });
    await fencer.powerOn('compute-0');
    assert.equal(sim.power(), 'on');
  });

  it('the real fence_ipmilan powers the host off, with the password on stdin only, and the status is confirmed', async () => {
    const sim = await start({ password: passwords[1] });
    const seen: Array<{ argv: string; environment: string }> = [];
    const fencer = fencerFor(`FencingConfig:\n  compute-1:${fenceIpmilanEntry(sim)}\n`, {
      onSpawn: (pid) => {
        seen.push({
          argv: readFileSync(`/proc/${pid}/cmdline`, 'utf8'),
          environment: readFileSync(`/proc/${pid}/environ`, 'utf8'),
        });
      },
    });
    const result = await fencer.powerOff('compute-1');
    assert.equal(result.method, 'fence_ipmilan');
    assert.equal(sim.power(), 'off');
    assert.ok(sim.powerCommands().includes('0'));
    // One `off` and at least one `status` run; none carried the password in argv or environment.
    assert.ok(seen.length >= 2, `expected off + status runs, saw ${seen.length}`);
    for (const run of seen) {
      assert.match(run.argv, /fence_ipmilan/);
      assert.ok(!run.argv.includes(sim.password), 'password found in the agent argv');
      assert.ok(!run.environment.includes(sim.password), 'password found in the agent environment');
    }
    // A second fence of a host already off is harmless and still confirmed.
    const again = await fencer.powerOff('compute-1');
    assert.equal(again.alreadyOff, true);
  });

  it('a wrong password is an unrecoverable failure, not retried, and the host keeps its power', async () => {
    const sim = await start();
    for (const entry of [
      ipmiEntry({ ...sim, password: 'wrong-password' }),
      fenceIpmilanEntry(sim, 'wrong-password'),
    ]) {
      const fencer = fencerFor(`FencingConfig:\n  compute-2:${entry}\n`);
      const before = captured.lines.length;
      await assert.rejects(fencer.powerOff('compute-2'), (error: unknown) => {
        assert.ok(error instanceof FencingFailedError);
        assert.equal(error.kind, 'credentials', error.message);
        assert.equal(error.recoverable, false);
        assert.ok(!error.message.includes('wrong-password'), 'the password leaked into the error');
        return true;
      });
      const retries = captured.lines.slice(before).filter((line) => line.includes('failed; retrying'));
      assert.deepEqual(retries, [], 'credentials errors are never retried');
    }
    assert.equal(sim.power(), 'on');
    assert.deepEqual(sim.powerCommands(), []);
  });

  it('an unreachable BMC is retried (3 attempts) and then fails as recoverable', async () => {
    const sim = await start();
    await sim.stop();
    const fencer = fencerFor(
      `FencingConfig:\n  compute-3:${ipmiEntry(sim).replace('timeout: 10', 'timeout: 5')}\n`,
    );
    const before = captured.lines.length;
    await assert.rejects(fencer.powerOff('compute-3'), (error: unknown) => {
      assert.ok(error instanceof FencingFailedError);
      assert.equal(error.kind, 'unreachable', error.message);
      assert.equal(error.recoverable, true);
      return true;
    });
    const retries = captured.lines
      .slice(before)
      .filter((line) => line.includes('power off failed; retrying'));
    assert.equal(retries.length, 2, 'two retries after the first attempt');
  });

  it('refuses to power off a BMC whose GUID is not the expected one', async () => {
    const sim = await start();
    const other = '00112233445566778899aabbccddeeff';
    for (const entry of [ipmiEntry(sim), fenceIpmilanEntry(sim)]) {
      const fencer = fencerFor(`FencingConfig:\n  compute-4:${entry}\n    expected_guid: "${other}"\n`);
      await assert.rejects(fencer.powerOff('compute-4'), (error: unknown) => {
        assert.ok(error instanceof FencingFailedError);
        assert.equal(error.kind, 'identity');
        assert.equal(error.recoverable, false);
        assert.ok(error.failures[0]?.error instanceof FenceIdentityMismatchError);
        assert.match(error.message, new RegExp(`expects ${other}`));
        return true;
      });
    }
    assert.equal(sim.power(), 'on');
    assert.deepEqual(sim.powerCommands(), [], 'nothing was powered off');

    const matching = fencerFor(
      `FencingConfig:\n  compute-4:${ipmiEntry(sim)}\n    expected_guid: "${sim.guid}"\n`,
    );
    await matching.powerOff('compute-4');
    assert.equal(sim.power(), 'off');
  });

  it('a topology falls through to the next method when the first fails, and records why', async () => {
    const locked = await start();
    const wrongHost = await start();
    const target = await start();
    const fencer = fencerFor(`FencingConfig:
  compute-5:
    methods:
${listItem(ipmiEntry({ ...locked, password: 'not-the-password' }))}
${listItem(ipmiEntry(wrongHost), [`expected_guid: "${target.guid}"`])}
${listItem(fenceIpmilanEntry(target))}
`);
    const result = await fencer.powerOff('compute-5');
    assert.equal(result.methodIndex, 2);
    assert.equal(result.method, 'fence_ipmilan');
    assert.deepEqual(
      result.failedMethods.map((failure) => failure.method),
      [`ipmi 127.0.0.1:${locked.port}`, `ipmi 127.0.0.1:${wrongHost.port}`],
    );
    assert.match(result.failedMethods[0]?.reason ?? '', /rejected the credentials/);
    assert.match(result.failedMethods[1]?.reason ?? '', /refusing to power it off/);
    assert.equal(locked.power(), 'on');
    assert.equal(wrongHost.power(), 'on', 'the BMC with the wrong identity was left alone');
    assert.equal(target.power(), 'off');
  });
});
