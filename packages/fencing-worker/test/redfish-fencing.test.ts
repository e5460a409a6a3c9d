import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type CloudSim, startCloudSim } from '@lifeguard/cloud-sim';
import { createLogger } from '@lifeguard/runtime';
import { CapturedLines } from '@lifeguard/testing';
import { FencingFailedError } from '../src/index.ts';
import { loopbackFencer } from './support/loopback-fencer.ts';

const captured = new CapturedLines();
const logger = createLogger({ service: 'fencing-worker-test', level: 'debug', destination: captured });

describe('fencing through Redfish against cloud-sim BMCs (native driver and the real fence_redfish)', () => {
  let sim: CloudSim;
  const passwords: string[] = [];

  before(async () => {
    sim = await startCloudSim({ hosts: 6, model: { reportIntervalSeconds: 1, serviceDownTimeSeconds: 3 } });
    for (const host of sim.model.hosts.values()) {
      host.bmc.password = `Rf-${Math.random().toString(36).slice(2, 12)}`;
      passwords.push(host.bmc.password);
    }
  });

  after(async () => {
    await sim.close();
    for (const password of passwords)
      assert.ok(!captured.text.includes(password), 'a BMC password was logged');
  });

  /** A native redfish entry for a cloud-sim host's BMC (self-signed certificate: ssl_verify false). */
  const redfish = (host: string, extra: Record<string, unknown> = {}) => {
    const bmc = sim.bmc(host);
    return {
      agent: 'redfish',
      ipaddr: bmc.address,
      ipport: bmc.port,
      login: bmc.username,
      passwd: bmc.password,
      uuid: sim.model.host(host).bmc.systemId,
      tls: 'true',
      ssl_verify: false,
      timeout: 5,
      ...extra,
    };
  };
  const fenceRedfish = (
    host: string,
    extra: Record<string, unknown> = {},
    options: Record<string, unknown> = {},
  ) => {
    const bmc = sim.bmc(host);
    return {
      agent: 'fence_redfish',
      ipaddr: bmc.address,
      ipport: bmc.port,
      login: bmc.username,
      passwd: bmc.password,
      options: { ssl_insecure: 1, ...options },
      timeout: 30,
      ...extra,
    };
  };

  const fencerFor = (hosts: Record<string, unknown>, hooks: { onSpawn?: (pid: number) => void } = {}) =>
    loopbackFencer(JSON.stringify({ FencingConfig: hosts }), logger, hooks);

  it('the native driver powers a host off (its heartbeats stop), checks the system UUID first, and refuses a wrong one', async () => {
    const uuid = sim.model.host('compute1').bmc.uuid;
    const wrong = fencerFor({ compute1: redfish('compute1', { expected_system_uuid: crypto.randomUUID() }) });
    await assert.rejects(wrong.powerOff('compute1'), (error: unknown) => {
      assert.ok(error instanceof FencingFailedError);
      assert.equal(error.kind, 'identity');
      assert.equal(error.recoverable, false);
      return true;
    });
    assert.equal(sim.powerState('compute1'), 'On', 'a mismatched identity powers nothing off');

    const fencer = fencerFor({ compute1: redfish('compute1', { expected_system_uuid: uuid.toUpperCase() }) });
    const result = await fencer.powerOff('compute1.example.com');
    assert.deepEqual([result.method, result.alreadyOff], ['redfish', false]);
    assert.equal(sim.powerState('compute1'), 'Off');
    assert.equal(sim.model.heartbeating(sim.model.host('compute1')), false);
  });

  it('"already off": a BMC answering ForceOff with 409 (iDRAC) or 400 (iLO) while off counts as confirmed off', async () => {
    for (const [host, status] of [
      ['compute2', 409],
      ['compute3', 400],
    ] as const) {
      sim.setBmcQuirks(host, { alreadyOffStatus: status });
      const fencer = fencerFor({ [host]: redfish(host) });
      const first = await fencer.powerOff(host);
      assert.equal(first.alreadyOff, false);
      const second = await fencer.powerOff(host);
      assert.equal(second.alreadyOff, true, `HTTP ${status} while off`);
      assert.equal(second.attempts, 1, 'no retry needed');
      assert.equal(sim.powerState(host), 'Off');
    }
  });

  it('an On rejected right after ForceOff is retried until the BMC takes it (and fails after 3 refusals)', async () => {
    sim.setBmcQuirks('compute4', { rejectOnAfterForceOff: 2 });
    const fencer = fencerFor({ compute4: redfish('compute4') });
    await fencer.powerOff('compute4');
    const before = captured.lines.length;
    await fencer.powerOn('compute4');
    assert.equal(sim.powerState('compute4'), 'On');
    const retries = captured.lines.slice(before).filter((line) => line.includes('On failed; retrying'));
    assert.equal(retries.length, 2, 'two refusals, then accepted');

    sim.setBmcQuirks('compute4', { rejectOnAfterForceOff: 3 });
    await fencer.powerOff('compute4');
    await assert.rejects(fencer.powerOn('compute4'), (error: unknown) => {
      assert.ok(error instanceof FencingFailedError);
      assert.equal(error.kind, 'refused');
      assert.equal(error.recoverable, true);
      assert.match(error.message, /HTTP 400 while PowerState is off/);
      return true;
    });
    assert.equal(sim.powerState('compute4'), 'Off');
  });

  it('wrong credentials (HTTP 401) fail at once as unrecoverable; an unreachable BMC is retried, then fails', async () => {
    const before = captured.lines.length;
    const locked = fencerFor({ compute5: redfish('compute5', { passwd: 'not-the-password' }) });
    await assert.rejects(locked.powerOff('compute5'), (error: unknown) => {
      assert.ok(error instanceof FencingFailedError);
      assert.equal(error.kind, 'credentials');
      assert.equal(error.recoverable, false);
      assert.match(error.message, /HTTP 401/);
      return true;
    });
    assert.equal(captured.lines.slice(before).filter((line) => line.includes('retrying')).length, 0);

    sim.setBmcQuirks('compute5', { unreachable: true });
    const unreachable = fencerFor({ compute5: redfish('compute5') });
    await assert.rejects(unreachable.powerOff('compute5'), (error: unknown) => {
      assert.ok(error instanceof FencingFailedError);
      assert.equal(error.kind, 'unreachable');
      assert.equal(error.recoverable, true);
      return true;
    });
    assert.equal(
      captured.lines.slice(before).filter((line) => line.includes('ForceOff failed; retrying')).length,
      2,
    );
    sim.setBmcQuirks('compute5', { unreachable: false });
    assert.equal(sim.powerState('compute5'), 'On');
  });

  it('verifies the BMC certificate by default: an untrusted one is a configuration error', async () => {
    const strict = fencerFor({ compute5: redfish('compute5', { ssl_verify: true }) });
    await assert.rejects(strict.powerOff('compute5'), (error: unknown) => {
      assert.ok(error instanceof FencingFailedError);
      assert.equal(error.kind, 'configuration');
      assert.match(error.message, /certificate|self.signed/i);
      return true;
    });
    assert.equal(sim.powerState('compute5'), 'On');
  });

  it('the real fence_redfish powers off and confirms, with the password on stdin only; "already off"; wrong password is unrecoverable', async () => {
    const host = 'compute6';
    sim.setBmcQuirks(host, { alreadyOffStatus: 409 });
    const password = sim.model.host(host).bmc.password;
    const seen: string[] = [];
    const fencer = fencerFor(
      { [host]: fenceRedfish(host, { expected_system_uuid: sim.model.host(host).bmc.uuid }) },
      {
        onSpawn: (pid) => {
          seen.push(
            readFileSync(`/proc/${pid}/cmdline`, 'utf8'),
            readFileSync(`/proc/${pid}/environ`, 'utf8'),
          );
        },
      },
    );
    const result = await fencer.powerOff(host);
    assert.equal(result.method, 'fence_redfish');
    assert.equal(sim.powerState(host), 'Off');
    assert.ok(seen.length >= 4, 'the off run and at least one status run were seen');
    for (const text of seen) assert.ok(!text.includes(password), 'password in the agent argv or environment');
    const again = await fencer.powerOff(host);
    assert.equal(again.alreadyOff, true);

    const wrong = fencerFor({ [host]: fenceRedfish(host, { passwd: 'not-the-password' }) });
    await assert.rejects(wrong.powerOff(host), (error: unknown) => {
      assert.ok(error instanceof FencingFailedError);
      assert.equal(error.kind, 'credentials', error.message);
      assert.equal(error.recoverable, false);
      return true;
    });
  });

  it('fence_redfish: an On refused right after ForceOff more often than the agent retries fails its run; lifeguard retries and the host comes on', async () => {
    const host = 'compute6';
    // The fencing library sends On 1 + retry_on (default 1) times per run: two refusals fail the run.
    sim.setBmcQuirks(host, { rejectOnAfterForceOff: 2 });
    const fencer = fencerFor({ [host]: fenceRedfish(host, {}, { power_timeout: 3 }) });
    sim.model.powerOn(host);
    await fencer.powerOff(host);
    const before = captured.lines.length;
    await fencer.powerOn(host);
    assert.equal(sim.powerState(host), 'On');
    assert.equal(
      captured.lines.slice(before).filter((line) => line.includes('action=on failed; retrying')).length,
      1,
    );
  });
});
