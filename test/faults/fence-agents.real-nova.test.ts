// Fence agents that hang or lie, on the real-Nova harness (Nova Zed) with lifeguard started as an
// operator starts it. Two compute hosts die (SIGKILL of their nova-compute, a server on each):
// - the first host's BMC hangs: its address takes the real fence_ipmilan's UDP packets and never
//   answers, so the agent would wait far longer than the method's timeout (5 s);
// - the second host is fenced through an agent that lies: for `off` it prints fence_ipmilan's success
//   line and exits 0 without touching the BMC; for `status` it runs the real fence_ipmilan against the
//   host's ipmi_sim, which still says on.
// Expected: the timeout fires (the hung agent is ended), the power state is read back (and found on),
// the host is not forced down, disabled or evacuated, host.fencing.failed names the reason, and the
// fencing worker's metrics raise the alerts (LifeguardFencingFailed; LifeguardFencePowerOffNotConfirmed
// for the lie, deploy/prometheus).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type IpmiSimulator, startIpmiSimulator } from '@lifeguard/testing';
import { realNova } from '../e2e/support/real-nova.ts';
import { RealNovaDeployment } from '../e2e/support/real-nova-deployment.ts';
import { recordFaultRow } from './support/fault-table.ts';
import { ACTING_TYPES, evacuationsPerServer, journalOf, lostEvents } from './support/incident-figures.ts';

/** The fence agents lifeguard runs: the packaged one, and a liar the test writes. */
const LYING_AGENT = `#!/bin/sh
# A fence agent that lies about "off": it says the power is off and exits 0 without asking the BMC.
# Every other action (status, on, monitor) is the real fence_ipmilan with the same standard input.
input=$(cat)
case "$input" in
  *'action="off"'*) echo "Success: Powered OFF"; exit 0 ;;
esac
printf '%s\\n' "$input" | exec /usr/sbin/fence_ipmilan
`;

/** The hung BMC's method timeout in seconds (the minimum fencing.yaml accepts). */
const METHOD_TIMEOUT_SECONDS = 5;
/**
 * The lying agent's method timeout in seconds: long enough for fence_ipmilan's `status` (a Python
 * start and an IPMI session, several seconds on a loaded machine) to read the power back at all.
 */
const LYING_METHOD_TIMEOUT_SECONDS = 15;
/** Fence job attempts before host.fencing.failed. */
const ATTEMPTS = 2;

describe('fence agents that hang or lie, on real Nova (fence_ipmilan, ipmi_sim)', {
  timeout: 600_000,
}, () => {
  const nova = realNova();
  const [hangingHost, lyingHost] = nova.hosts as [string, string];
  const servers = new Map<string, string>();
  const agents = mkdtempSync(join(tmpdir(), 'lifeguard-faults-agents-'));
  let blackHole: Socket;
  let packetsToBlackHole = 0;
  let lyingBmc: IpmiSimulator;
  let deployment: RealNovaDeployment;

  before(async () => {
    await nova.restore();
    symlinkSync('/usr/sbin/fence_ipmilan', join(agents, 'fence_ipmilan'));
    writeFileSync(join(agents, 'fence_ipmilan_lying'), LYING_AGENT);
    chmodSync(join(agents, 'fence_ipmilan_lying'), 0o755);
    chmodSync(agents, 0o755);
    blackHole = createSocket('udp4');
    blackHole.on('message', () => packetsToBlackHole++);
    await new Promise<void>((resolve) => blackHole.bind(0, '127.0.0.1', resolve));
    lyingBmc = await startIpmiSimulator({
      chassisCommands: {
        off: nova.chassisCommand('off', lyingHost),
        on: nova.chassisCommand('on', lyingHost),
      },
    });
    const ipmi = (agent: string, port: number, login: string, password: string, timeout: number) => ({
      agent,
      ipaddr: '127.0.0.1',
      ipport: port,
      login,
      passwd: password,
      options: { lanplus: 1, cipher: 3 },
      timeout,
    });
    const tag = randomUUID().slice(0, 6);
    for (const host of [hangingHost, lyingHost])
      servers.set(host, await nova.boot(`faults-fence-${tag}-${host}`, host));
    deployment = await RealNovaDeployment.start({
      label: 'faults-fence',
      fencing: 'ipmi',
      logLevel: 'info',
      fencingEntries: {
        [hangingHost]: ipmi(
          'fence_ipmilan',
          blackHole.address().port,
          'admin',
          'hung-bmc-secret',
          METHOD_TIMEOUT_SECONDS,
        ),
        [lyingHost]: ipmi(
          'fence_ipmilan_lying',
          lyingBmc.port,
          lyingBmc.login,
          lyingBmc.password,
          LYING_METHOD_TIMEOUT_SECONDS,
        ),
      },
      fencingWorkerEnvironment: {
        LIFEGUARD_FENCE_AGENTS_DIRECTORY: agents,
        LIFEGUARD_FENCING_ATTEMPTS: String(ATTEMPTS),
      },
    });
  });

  after(async () => {
    try {
      await deployment?.stop();
    } finally {
      await lyingBmc?.stop();
      blackHole?.close();
      rmSync(agents, { recursive: true, force: true });
      await nova.deleteServers([...servers.values()]);
      await nova.restore();
    }
  });

  /**
   * Kills the host's nova-compute, waits for host.fencing.failed of its incident and a few more polls,
   * and counts what lifeguard did to the host and its server.
   */
  async function failedFence(host: string) {
    const { timeline, run } = deployment;
    // The other host of this file may be down from its own test: bring every compute back first, so
    // THRESHOLD counts only this host.
    await nova.restore();
    const failedBefore = await run.metric('fencing-worker', 'lifeguard_fencing_total', { result: 'failed' });
    const killedAt = Date.now();
    await nova.signalCompute(host, 'KILL');
    const down = await timeline.waitFor(
      'host.down',
      (event) => event.data.host === host && Date.parse(event.occurredAt) >= killedAt,
      120_000,
    );
    const incidentId = down.data.incidentId;
    const failed = await timeline.waitFor(
      'host.fencing.failed',
      (event) => event.data.incidentId === incidentId,
      180_000,
    );
    await run.pollCycles(3);
    const service = await nova.service(host);
    const server = await nova.server(servers.get(host)!);
    const evacuations = (await evacuationsPerServer(deployment, host, [servers.get(host)!])).get(
      servers.get(host)!,
    )!;
    const acted = timeline
      .forHost(host)
      .filter(
        (event) =>
          ACTING_TYPES.has(event.type) &&
          event.type !== 'host.down' &&
          Date.parse(event.occurredAt) >= killedAt,
      );
    const incidents = new Set(
      timeline
        .ofType('host.down')
        .filter((event) => event.data.host === host && Date.parse(event.occurredAt) >= killedAt)
        .map((event) => event.data.incidentId),
    );
    const fencedCount = acted.filter((event) => event.type === 'host.fenced').length;
    return {
      incidentId,
      failed,
      service,
      server,
      evacuations,
      acted,
      duplicateEffects: incidents.size - 1 + Math.max(0, fencedCount - 1) + Math.max(0, evacuations - 1),
      duplicateIncidents: incidents.size - 1,
      eventsLost: await lostEvents(timeline, journalOf(deployment), incidentId, [
        'host.down',
        'host.fencing.failed',
      ]),
      failedJobs:
        (await run.metric('fencing-worker', 'lifeguard_fencing_total', { result: 'failed' })) - failedBefore,
      secondsToFailure: (Date.parse(failed.occurredAt) - Date.parse(down.occurredAt)) / 1000,
    };
  }

  it('a BMC that never answers: the agent is ended at the method timeout, the host is left alone (not forced down, disabled or evacuated), host.fencing.failed and the failed-fence alert metric', async () => {
    const unreachableBefore = await deployment.run.metric(
      'fencing-worker',
      'lifeguard_fence_attempt_failures_total',
      {
        kind: 'unreachable',
      },
    );
    const outcome = await failedFence(hangingHost);
    const unreachable =
      (await deployment.run.metric('fencing-worker', 'lifeguard_fence_attempt_failures_total', {
        kind: 'unreachable',
      })) - unreachableBefore;
    recordFaultRow({
      fault: 'Fence agent hangs (BMC takes packets, never answers)',
      inFlight: '1 incident (1 instance)',
      eventsLost: outcome.eventsLost,
      duplicateEffects: outcome.duplicateEffects,
      secondsToResume: null,
      outcome: `agent ended at ${METHOD_TIMEOUT_SECONDS} s ×${unreachable}; host.fencing.failed after ${outcome.secondsToFailure.toFixed(1)} s; alert LifeguardFencingFailed; not evacuated`,
    });
    assert.match(
      outcome.failed.data.reason,
      new RegExp(`no result within ${METHOD_TIMEOUT_SECONDS * 1000} ms`),
    );
    assert.ok(packetsToBlackHole > 0, 'fence_ipmilan did send to the BMC address');
    assert.ok(unreachable >= 1, 'each timed-out attempt is counted as unreachable');
    assert.equal(outcome.failedJobs, 1, 'one fence job failed for good (LifeguardFencingFailed)');
    assert.deepEqual(outcome.acted, [], 'no host.fenced, evacuation or re-enable');
    assert.deepEqual(
      [outcome.service.forced_down, outcome.service.status],
      [false, 'enabled'],
      'not forced down or disabled',
    );
    assert.equal(outcome.evacuations, 0, 'no evacuation');
    assert.equal(outcome.server['OS-EXT-SRV-ATTR:host'], hangingHost, 'the server stays on its host');
    assert.equal(outcome.duplicateIncidents, 0);
    assert.equal(outcome.eventsLost, 0, 'host.down and host.fencing.failed published and journaled');
  });

  it('an agent that reports "off" without acting while the BMC still says on: the power state is read back as on, the host is left alone, host.fencing.failed names it, and the not-confirmed alert metric counts it', async () => {
    const notConfirmedBefore = await deployment.run.metric(
      'fencing-worker',
      'lifeguard_fence_attempt_failures_total',
      {
        kind: 'not-confirmed',
      },
    );
    const outcome = await failedFence(lyingHost);
    const notConfirmed =
      (await deployment.run.metric('fencing-worker', 'lifeguard_fence_attempt_failures_total', {
        kind: 'not-confirmed',
      })) - notConfirmedBefore;
    recordFaultRow({
      fault: 'Fence agent lies (says off, BMC still on)',
      inFlight: '1 incident (1 instance)',
      eventsLost: outcome.eventsLost,
      duplicateEffects: outcome.duplicateEffects,
      secondsToResume: null,
      outcome: `power read back on ×${notConfirmed}; alert LifeguardFencePowerOffNotConfirmed; host.fencing.failed; not evacuated`,
    });
    assert.match(
      outcome.failed.data.reason,
      /power off not confirmed within 15 s \(power state still on[;)]/,
    );
    assert.deepEqual(lyingBmc.powerCommands(), [], 'the BMC was never told to power off');
    assert.equal(lyingBmc.power(), 'on', 'the BMC still says on');
    assert.equal(notConfirmed, ATTEMPTS, 'every attempt read the power back and counted it');
    assert.equal(outcome.failedJobs, 1, 'one fence job failed for good (LifeguardFencingFailed)');
    assert.deepEqual(outcome.acted, [], 'no host.fenced, evacuation or re-enable');
    assert.deepEqual(
      [outcome.service.forced_down, outcome.service.status],
      [false, 'enabled'],
      'not forced down or disabled',
    );
    assert.equal(outcome.evacuations, 0, 'no evacuation');
    assert.equal(outcome.server['OS-EXT-SRV-ATTR:host'], lyingHost, 'the server stays on its host');
    assert.equal(outcome.duplicateIncidents, 0);
    assert.equal(outcome.eventsLost, 0, 'host.down and host.fencing.failed published and journaled');
  });
});
