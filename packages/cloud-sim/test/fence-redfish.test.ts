import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { request } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { type CloudSim, startCloudSim } from '../src/index.ts';

const run = promisify(execFile);
const FENCE_REDFISH = '/usr/sbin/fence_redfish';
let sim: CloudSim;

/** Runs the real fence_redfish against a host's BMC; resolves with exit code and output. */
async function fenceRedfish(
  host: string,
  action: string,
  options: { password?: string; systemsUri?: boolean } = {},
) {
  const bmc = sim.bmc(host);
  const args = [
    '--ip',
    bmc.address,
    '--ipport',
    String(bmc.port),
    '--username',
    bmc.username,
    '--password',
    options.password ?? bmc.password,
    '--ssl-insecure',
    '--action',
    action,
    ...(options.systemsUri ? ['--systems-uri', bmc.systemsUri] : []),
  ];
  try {
    const { stdout, stderr } = await run(FENCE_REDFISH, args, { timeout: 60_000 });
    return { code: 0, output: `${stdout}${stderr}` };
  } catch (error) {
    const failure = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failure.code ?? -1, output: `${failure.stdout ?? ''}${failure.stderr ?? ''}` };
  }
}

/** POSTs JSON to the BMC over HTTPS (self-signed certificate accepted for this call only); resolves with the status. */
function redfishPost(bmc: ReturnType<CloudSim['bmc']>, path: string, body: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const call = request(
      {
        host: bmc.address,
        port: bmc.port,
        path,
        method: 'POST',
        rejectUnauthorized: false,
        auth: `${bmc.username}:${bmc.password}`,
        headers: { 'content-type': 'application/json' },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    call.on('error', reject);
    call.end(JSON.stringify(body));
  });
}

before(async () => {
  sim = await startCloudSim({ hosts: 3, model: { reportIntervalSeconds: 1, serviceDownTimeSeconds: 2 } });
});
after(() => sim.close());

describe('fence_redfish (Debian fence-agents) against cloud-sim BMCs', { timeout: 120_000 }, () => {
  it('reads the power status of a running host', async () => {
    const result = await fenceRedfish('compute2', 'status');
    assert.equal(result.code, 0, result.output);
    assert.match(result.output, /Status: ON/);
  });

  it('powers a host off (heartbeats stop) and reports it off (exit 2), finding the system itself', async () => {
    const result = await fenceRedfish('compute2', 'off');
    assert.equal(result.code, 0, result.output);
    assert.match(result.output, /Success: Powered OFF/);
    assert.equal(sim.powerState('compute2'), 'Off');
    const host = sim.model.host('compute2');
    assert.equal(host.computeRunning, false);
    assert.equal(sim.model.heartbeating(host), false);
    const status = await fenceRedfish('compute2', 'status', { systemsUri: true });
    assert.equal(status.code, 2, status.output);
    assert.match(status.output, /Status: OFF/);
  });

  it('answers "already off" without another reset', async () => {
    const result = await fenceRedfish('compute2', 'off');
    assert.equal(result.code, 0, result.output);
    assert.match(result.output, /Success: Already OFF/);
  });

  it('powers the host on again: nova-compute restarts and reports up', async () => {
    const result = await fenceRedfish('compute2', 'on');
    assert.equal(result.code, 0, result.output);
    assert.match(result.output, /Success: Powered ON/);
    assert.equal(sim.powerState('compute2'), 'On');
    assert.equal(sim.model.serviceIsUp(sim.model.host('compute2')), true);
  });

  it("refuses wrong credentials (another host's BMC password included)", async () => {
    const wrong = await fenceRedfish('compute1', 'status', {
      password: sim.bmc('compute3').password,
      systemsUri: true,
    });
    assert.notEqual(wrong.code, 0);
    assert.equal(sim.powerState('compute1'), 'On');
  });

  it('keeps rejecting On right after ForceOff as configured, then accepts it', async () => {
    sim.setBmcQuirks('compute3', { rejectOnAfterForceOff: 2, alreadyOffStatus: 409 });
    const bmc = sim.bmc('compute3');
    const reset = (resetType: string) =>
      redfishPost(bmc, `${bmc.systemsUri}/Actions/ComputerSystem.Reset`, { ResetType: resetType });
    assert.equal(await reset('ForceOff'), 204);
    assert.equal(await reset('ForceOff'), 409, 'already off: iDRAC answers 409');
    assert.equal(await reset('On'), 400);
    assert.equal(await reset('On'), 400);
    assert.equal(await reset('On'), 204);
    assert.equal(sim.powerState('compute3'), 'On');
  });
});
