// Two node monitors, the leader's link to Redis through a TCP proxy that the test slows down or cuts
// (the leader's RabbitMQ link and everything else stay healthy): the whole stack as `npm start` runs
// it on cloud-sim, plus a second node monitor started by the test. A compute host is killed while the
// leader's link is bad; the standby must take over, the host must be handled exactly once (one
// incident, one fence, one evacuation of each server), and any host.down the deposed leader publishes
// late must be dropped by the fencing worker (docs/failure-modes.md#partitions-between-lifeguards-own-machines).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LeaderLease, nodeMonitorLeaderKey } from '@lifeguard/runtime';
import { REDIS_URL, startTcpProxy, type TcpProxy, waitFor } from '@lifeguard/testing';
import { SimulatedDeployment } from '../e2e/support/simulated-deployment.ts';
import { recordFaultRow } from './support/fault-table.ts';
import {
  duplicateEffects,
  evacuableServers,
  type HostFigures,
  hostFigures,
  lostEffects,
} from './support/host-figures.ts';
import { startWorkerCopy, type WorkerCopy } from './support/worker-copy.ts';

const LEASE_TTL_SECONDS = 3;

/** A log record's time (pino's ISO time), in milliseconds since the epoch. */
const timeOf = (record: Record<string, unknown>): number => Date.parse(String(record.time));

describe('split brain: two node monitors, the leader with a delayed or cut link to Redis', {
  timeout: 600_000,
}, () => {
  let deployment: SimulatedDeployment;
  let proxy: TcpProxy;
  const copies: WorkerCopy[] = [];

  before(async () => {
    const redisUrl = new URL(REDIS_URL);
    proxy = await startTcpProxy({ targetHost: redisUrl.hostname, targetPort: Number(redisUrl.port || 6379) });
    const proxied = new URL(REDIS_URL);
    proxied.port = String(proxy.port);
    deployment = await SimulatedDeployment.start({
      label: 'split-brain',
      cloud: {
        reportIntervalSeconds: 1,
        serviceDownTimeSeconds: 4,
        bootMilliseconds: 1000,
        evacuationAcceptMilliseconds: 0,
        evacuationRebuildMilliseconds: 1000,
      },
      instanceHa: { POLL: '1', DELTA: '4' },
      workerEnvironment: {
        // The stack's own node monitor (the first leader) reaches Redis through the proxy only.
        'node-monitor': {
          LIFEGUARD_REDIS_URL: proxied.toString(),
          LIFEGUARD_NODE_MONITOR_LEASE_TTL_SECONDS: String(LEASE_TTL_SECONDS),
        },
      },
    });
  });

  after(async () => {
    for (const copy of copies) await copy.stop();
    await deployment?.stop();
    await proxy?.stop();
  });

  const lease = () => LeaderLease.read(deployment.redis, nodeMonitorLeaderKey(deployment.keyPrefix));

  /** A second node monitor on a direct link, started as a standby; resolves once it stands by. */
  const startStandby = async (name: string): Promise<WorkerCopy> => {
    const standby = startWorkerCopy(deployment.run, 'node-monitor', {
      name,
      environment: { LIFEGUARD_REDIS_URL: REDIS_URL },
    });
    copies.push(standby);
    await standby.waitForLog(/^health and metrics server listening/, 300_000);
    return standby;
  };

  /**
   * Host.down events carrying `deposedToken` received after `newToken` was issued (at `since`), and
   * how many of them the fencing worker dropped as stale.
   */
  const lateEvents = (deposedToken: number, since: number) => {
    const late = deployment.timeline.received.filter(
      (each) =>
        each.event.type === 'host.down' &&
        each.receivedAt >= since &&
        (each.event.data as { fencingToken: number }).fencingToken === deposedToken,
    );
    const dropped = new Set(
      deployment.run
        .records('fencing-worker')
        .filter((record) =>
          String(record.msg ?? '').startsWith('host.down from a stale node monitor dropped'),
        )
        .map((record) => record.eventId),
    );
    return { late: late.length, dropped: late.filter((each) => dropped.has(each.event.id)).length };
  };

  const record = (
    fault: string,
    figures: HostFigures,
    seconds: number,
    late: { late: number; dropped: number },
  ) => {
    recordFaultRow({
      fault,
      inFlight: `1 incident (${figures.host}), 2 node monitors`,
      eventsLost: lostEffects(figures),
      duplicateEffects: duplicateEffects(figures),
      secondsToResume: Math.round(seconds * 10) / 10,
      outcome: `standby led after ${seconds.toFixed(1)} s; incidents ${figures.incidents}, fenced ${figures.fenced}, evacuated ${figures.evacuated}; deposed leader's late host.down ${late.late}, dropped ${late.dropped}`,
    });
  };

  it("the leader's Redis link slower than the lease: the standby takes over, the host is handled once", async (t) => {
    const first = await lease();
    assert.ok(first, 'the stack node monitor leads');
    assert.match(first.holder, /:node-monitor#/);
    const standby = await startStandby('split-brain-standby-1');
    // Each direction 2 s: a renewal is answered 4 s after it was sent, past the 3 s lease.
    const faultAt = Date.now();
    proxy.setDelay(2_000);
    const led = await standby.waitForLog(/^this node monitor now leads/, 60_000);
    const secondsToTakeOver = (timeOf(led) - faultAt) / 1000;
    const current = await lease();
    assert.ok(current && current.token > first.token, 'a newer token leads');
    const victim = deployment.layout.protectedHosts[0]!;
    const servers = evacuableServers(deployment, victim);
    deployment.sim.killHost(victim);
    const figures = await hostFigures(deployment, victim, servers);
    const late = lateEvents(first.token, faultAt);
    t.diagnostic(JSON.stringify({ secondsToTakeOver, figures, late }));
    record("node monitor leader's Redis link delayed past the lease", figures, secondsToTakeOver, late);
    assert.equal(lostEffects(figures), 0, 'nothing lost');
    assert.equal(duplicateEffects(figures), 0, 'nothing done twice');
    assert.equal(late.dropped, late.late, 'every late host.down of the deposed leader dropped');
    // The deposed leader (still running, link slow) never acted after it was deposed.
    const afterDeposed = deployment.run
      .records('node-monitor')
      .filter((each) => timeOf(each) > timeOf(led) && String(each.msg).startsWith('host.down published'));
    assert.deepEqual(afterDeposed, [], 'the deposed leader published nothing');
    proxy.setDelay(0);
    await standby.stop();
  });

  it("the leader's Redis link cut, then healed: the standby takes over, the old leader stops acting, the host is handled once", async (t) => {
    // The stack's node monitor leads again once the first standby stopped (it released the lease).
    await waitFor(
      'the stack node monitor to lead again',
      async () => (await lease())?.holder.includes(':node-monitor#'),
      60_000,
      200,
    );
    const first = (await lease())!;
    const standby = await startStandby('split-brain-standby-2');
    const victim = deployment.layout.protectedHosts[1]!;
    const servers = evacuableServers(deployment, victim);
    const faultAt = Date.now();
    proxy.cut();
    deployment.sim.killHost(victim);
    const led = await standby.waitForLog(/^this node monitor now leads/, 60_000);
    const secondsToTakeOver = (timeOf(led) - faultAt) / 1000;
    const figures = await hostFigures(deployment, victim, servers);
    // Heal: whatever the old leader held back reaches Redis and RabbitMQ now.
    proxy.heal();
    const healedAt = Date.now();
    await waitFor(
      'three more standby cycles after the heal',
      () =>
        standby
          .records()
          .filter((each) => String(each.msg).startsWith('Poll cycle completed') && timeOf(each) > healedAt)
          .length >= 3,
      60_000,
      200,
    );
    const after = await hostFigures(deployment, victim, servers, 0);
    const late = lateEvents(first.token, faultAt);
    t.diagnostic(JSON.stringify({ secondsToTakeOver, figures: after, late }));
    record(
      "node monitor leader's Redis link cut (healed after the incident)",
      after,
      secondsToTakeOver,
      late,
    );
    assert.deepEqual(after, figures, 'nothing changed once the old leader came back');
    assert.equal(lostEffects(after), 0, 'nothing lost');
    assert.equal(duplicateEffects(after), 0, 'nothing done twice');
    assert.equal(late.dropped, late.late, 'every late host.down of the deposed leader dropped');
    const holder = await lease();
    assert.equal(
      holder?.holder.includes('split-brain-standby-2'),
      true,
      'the standby keeps the lease after the heal',
    );
  });
});
