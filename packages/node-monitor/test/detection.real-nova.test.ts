import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { IncidentId } from '@lifeguard/contracts';
import { IncidentStore } from '@lifeguard/instance-ha';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import { captureEvents, type EventCapture } from './support/event-capture.ts';
import {
  type MonitorProcess,
  startMonitorProcess,
  writeInstanceHaConfig,
} from './support/monitor-process.ts';
import { realNova } from './support/real-nova.ts';

// Small settings (LIFEGUARD_UNSAFE_SHORT_INTERVALS): the harness's computes report every 2 s.
const POLL = 1;
const DELTA = 6;
const LEASE_TTL_SECONDS = 3;
const BOUND_MILLISECONDS = (DELTA + POLL + 2) * 1000;

describe('node-monitor against real Nova (test/harness/real-nova)', () => {
  const cloud = realNova();
  const [survivor, victim, disabledHost] = cloud.hosts as [string, string, string];
  const redis = testRedis();
  const prefix = randomKeyPrefix('monitor-real-nova');
  const servers: string[] = [];
  const monitors: MonitorProcess[] = [];
  let vhost: TestVhost;
  let events: EventCapture;

  const start = (name: string) => {
    const monitor = startMonitorProcess(name, {
      ...cloud.monitorEnv(vhost.url, prefix, LEASE_TTL_SECONDS),
      INSTANCEHA_CONFIG_PATH: writeInstanceHaConfig({
        POLL,
        DELTA,
        THRESHOLD: 100,
        TAGGED_AGGREGATES: false,
        LOGLEVEL: 'DEBUG',
      }),
    });
    monitors.push(monitor);
    return monitor;
  };
  const hostDowns = (host: string) => events.ofType('host.down').filter((event) => event.data.host === host);
  // The lease holder is `<instance name>#<per-process suffix>`.
  const leaderName = async () =>
    (await redis.get(`${prefix}:node-monitor:leader`))?.split('|')[0]?.split('#')[0] ?? null;

  before(async () => {
    vhost = await createTestVhost('monitor');
    events = await captureEvents(vhost.url);
    // Every compute running, enabled and up in Nova before a server is pinned to it: a compute an
    // earlier file left stopped or just started is not schedulable yet (its server would go to ERROR).
    await cloud.restore();
    servers.push(
      ...(await cloud.bootEach([
        ['monitor-victim', victim],
        ['monitor-disabled', disabledHost],
        ['monitor-survivor', survivor],
      ])),
    );
  });

  after(async () => {
    for (const monitor of monitors) monitor.kill('SIGKILL');
    await Promise.all(monitors.map((monitor) => monitor.exited));
    await cloud.restoreHostsAndDelete(servers);
    await events.close();
    await vhost.delete();
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  it('publishes exactly one host.down within DELTA + POLL + 2 s when a nova-compute is SIGKILLed, with two monitors running; a disabled host that dies gives none', async () => {
    const first = start('monitor-a');
    const second = start('monitor-b');
    await Promise.all([first.ready(), second.ready()]);
    await cloud.updateService(disabledHost, {
      status: 'disabled',
      disabled_reason: 'maintenance by the operator',
    });

    const killedAt = Date.now();
    await Promise.all([cloud.killCompute(victim), cloud.killCompute(disabledHost)]);
    const [event] = await waitFor(
      `host.down for ${victim}`,
      () => (hostDowns(victim).length > 0 ? hostDowns(victim) : undefined),
      BOUND_MILLISECONDS,
      50,
    );
    const latency = Date.now() - killedAt;
    process.stdout.write(`# detection latency ${latency} ms (bound ${BOUND_MILLISECONDS} ms)\n`);
    assert.ok(event);
    assert.equal(IncidentId.safeParse(event.data.incidentId).success, true);
    assert.equal(event.data.resume, false);
    assert.equal(event.data.kdumpFenced, false);
    assert.equal(event.data.evidence.status, 'enabled');
    assert.equal(event.data.evidence.forcedDown, false);
    assert.ok(event.data.fencingToken >= 1);
    assert.equal(event.source.service, 'node-monitor');

    // three more poll cycles of the leader (the standby does not poll): no duplicate, and nothing for
    // the disabled host
    const leading = await leaderName();
    const leader = monitors.find((monitor) => monitor.name === leading)!;
    const cyclesOf = (monitor: MonitorProcess) =>
      monitor.records().filter((record) => /Poll cycle completed/.test(String(record.msg))).length;
    const cyclesBefore = cyclesOf(leader);
    await waitFor('three more poll cycles', () => cyclesOf(leader) >= cyclesBefore + 3, 30_000);
    assert.equal(hostDowns(victim).length, 1, 'exactly one host.down for the failure');
    assert.equal(hostDowns(disabledHost).length, 0, 'a disabled host that dies produces no event');
    const incident = await new IncidentStore(redis, prefix).getOpenIncident(victim);
    assert.equal(incident?.id, event.data.incidentId);
    assert.equal(incident?.publishCount, 1);
    assert.equal(await new IncidentStore(redis, prefix).getOpenIncident(disabledHost), null);
  });

  it('SIGKILL of the leader: the standby takes over within the lease time, without a duplicate incident, and detects the next failure', async () => {
    const leaderNow = await leaderName();
    const current = monitors.find((monitor) => monitor.name === leaderNow)!;
    const standby = monitors.find((monitor) => monitor.name !== leaderNow)!;
    assert.ok(current && standby, `leader ${leaderNow}`);
    const killedAt = Date.now();
    current.kill('SIGKILL');
    await current.exited;
    await standby.waitForLog(/now leads/, LEASE_TTL_SECONDS * 3000);
    const takeover = Date.now() - killedAt;
    process.stdout.write(`# takeover ${takeover} ms (lease ${LEASE_TTL_SECONDS * 1000} ms)\n`);
    assert.ok(
      takeover <= LEASE_TTL_SECONDS * 1000 + (LEASE_TTL_SECONDS * 1000) / 5 + 1000,
      `takeover in ${takeover} ms`,
    );
    // the new leader polls several times: the victim's open incident stops a second one
    await waitFor(
      'two cycles of the new leader',
      () => standby.records().filter((record) => /Poll cycle completed/.test(String(record.msg))).length >= 2,
      20_000,
    );
    // A new leader announces again an incident still open that only the old leader announced (the
    // fencing worker drops the deposed leader's late events): same incident, never a second one.
    assert.deepEqual(
      [...new Set(hostDowns(victim).map((event) => event.data.incidentId))],
      [hostDowns(victim)[0]!.data.incidentId],
      'no duplicate incident after the takeover',
    );
    const incidents = await new IncidentStore(redis, prefix).listRecent(10);
    assert.equal(incidents.filter((incident) => incident.host === victim).length, 1);

    await cloud.killCompute(survivor);
    const [next] = await waitFor(
      `host.down for ${survivor}`,
      () => (hostDowns(survivor).length > 0 ? hostDowns(survivor) : undefined),
      BOUND_MILLISECONDS + 2000,
      50,
    );
    assert.ok(
      next!.data.fencingToken > hostDowns(victim)[0]!.data.fencingToken,
      'the new leader carries a newer fencing token',
    );
  });
});
