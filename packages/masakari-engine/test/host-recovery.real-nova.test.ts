// A Masakari COMPUTE_HOST STOPPED (the hostmonitor's body) for a hung compute of the real-Nova
// harness, with lifeguard deployed as `npm start` runs it (every worker its own process, noop fencing):
// the node monitor admits the host on the report before DELTA, the fencing worker fences and marks it,
// the evacuation worker evacuates its servers, and the notification ends `finished` once every server
// is ACTIVE on a surviving compute, with one succeeded vmove per server that the Masakari API serves at
// microversion 1.3. The time from the notification to that moment is the figure of
// docs/migrating-from-masakari.md. Then a `reserved_host` segment: the failed host's servers go to the
// segment's reserved host, which its operators kept disabled in Nova; lifeguard enables it, Nova
// rebuilds the servers there, and the Masakari host becomes reserved=false.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { masakariNotificationJobId } from '@lifeguard/contracts';
import { MonitorReportStore } from '@lifeguard/instance-ha';
import type { RecoveryMethod } from '@lifeguard/masakari-api';
import {
  MASAKARI_NOTIFICATION_JOB_NAME,
  MASAKARI_NOTIFICATION_QUEUE,
  MasakariStore,
  parseDateTime,
  SegmentWrites,
} from '@lifeguard/masakari-api';
import { bullmqPrefix } from '@lifeguard/runtime';
import { waitFor } from '@lifeguard/testing';
import { Queue } from 'bullmq';
import { realNova } from '../../../test/e2e/support/real-nova.ts';
import { RealNovaDeployment } from '../../../test/e2e/support/real-nova-deployment.ts';

/** Stores a COMPUTE_HOST STOPPED about `host` (the hostmonitor's body) and queues it, as the Masakari API does. */
async function notifyHostStopped(
  deployment: RealNovaDeployment,
  store: MasakariStore,
  host: string,
): Promise<string> {
  const created = await store.createNotification(
    {
      type: 'COMPUTE_HOST',
      hostname: host,
      generatedTime: parseDateTime(new Date().toISOString())!,
      payload: { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' },
    },
    180,
  );
  const uuid = created.notificationUuid;
  const queue = new Queue(MASAKARI_NOTIFICATION_QUEUE, {
    connection: deployment.redis,
    prefix: bullmqPrefix(deployment.keyPrefix),
  });
  await queue.add(
    MASAKARI_NOTIFICATION_JOB_NAME,
    { notificationUuid: uuid },
    { jobId: masakariNotificationJobId(uuid) },
  );
  await queue.close();
  return uuid;
}

/** The notification once it left `new` and `running`. */
function notificationEnded(store: MasakariStore, uuid: string, timeoutMilliseconds: number) {
  return waitFor(
    `notification ${uuid} ended`,
    async () => {
      const current = await store.getNotification(uuid);
      return current && current.status !== 'running' && current.status !== 'new' ? current : undefined;
    },
    timeoutMilliseconds,
    200,
  );
}

/** A segment of every harness host with `recoveryMethod`; `reserved` are flagged reserved. */
async function segmentOf(
  store: MasakariStore,
  hosts: ReadonlyArray<string>,
  recoveryMethod: RecoveryMethod,
  reserved: ReadonlyArray<string> = [],
): Promise<void> {
  const writes = new SegmentWrites(store);
  const segment = await writes.createSegment({
    name: `segment-${recoveryMethod}`,
    description: null,
    serviceType: 'COMPUTE',
    recoveryMethod,
    enabled: true,
  });
  for (const name of hosts)
    await writes.createHost(
      segment.uuid,
      {
        name,
        type: 'COMPUTE',
        controlAttributes: 'SSH',
        reserved: reserved.includes(name),
        onMaintenance: false,
      },
      async () => undefined,
    );
}

describe('a Masakari host report on real Nova, lifeguard deployed as npm start runs it', {
  timeout: 400_000,
}, () => {
  const nova = realNova();
  const victim = nova.hosts.at(-1)!;
  const survivors = nova.hosts.filter((host) => host !== victim);
  const servers: string[] = [];
  let deployment: RealNovaDeployment;
  let store: MasakariStore;

  const notifyStopped = (host: string) => notifyHostStopped(deployment, store, host);
  /** `GET /v1/notifications/{uuid}/vmoves` at microversion 1.3 from the stack's masakari-api process. */
  const vmovesOverHttp = async (uuid: string): Promise<Array<Record<string, unknown>>> => {
    const started = deployment.run
      .records('masakari-api')
      .find((record) => record.msg === 'Masakari v1 API listening');
    assert.ok(started, 'the masakari-api worker said where it listens');
    const response = await fetch(`http://127.0.0.1:${started.port}/v1/notifications/${uuid}/vmoves`, {
      headers: { 'OpenStack-API-Version': 'instance-ha 1.3' },
    });
    assert.equal(response.status, 200);
    return ((await response.json()) as { vmoves: Array<Record<string, unknown>> }).vmoves;
  };
  const ended = (uuid: string, timeoutMilliseconds: number) =>
    notificationEnded(store, uuid, timeoutMilliseconds);

  before(async () => {
    await nova.restore();
    const tag = randomUUID().slice(0, 6);
    servers.push(
      ...(await nova.bootEach([0, 1].map((index) => [`masakari-${tag}-${index}`, victim] as const))),
    );
    // DELTA is long: only the monitor's report can fail the host within this test.
    deployment = await RealNovaDeployment.start({
      label: 'masakari-host',
      fencing: 'noop',
      instanceHa: { DELTA: 120, NOVA_REPORT_INTERVAL: 2 },
      logLevel: 'info',
    });
    store = new MasakariStore({ redis: deployment.redis, keyPrefix: deployment.keyPrefix });
    await segmentOf(store, nova.hosts, 'auto');
  });

  after(async () => {
    try {
      await deployment?.stop();
    } finally {
      await nova.deleteServers(servers);
      await nova.restore();
    }
  });

  it('COMPUTE_HOST STOPPED for a host that is alive is ignored: refused by the report rule, nothing fenced', async () => {
    const alive = survivors[0]!;
    const uuid = await notifyStopped(alive);
    const record = await ended(uuid, 60_000);
    assert.equal(record.status, 'ignored', JSON.stringify(record.recoveryWorkflowDetails));
    const verdict = await new MonitorReportStore(deployment.redis, deployment.keyPrefix).verdict(uuid);
    assert.equal(verdict?.verdict, 'refused');
    assert.match(verdict?.reason ?? '', /reported .* after the monitor's report: the host runs/);
    assert.deepEqual(
      deployment.timeline.events.filter((event) => event.type === 'host.down'),
      [],
      'no host.down',
    );
    assert.equal((await nova.service(alive)).forced_down, false);
  });

  it('COMPUTE_HOST STOPPED: admitted before DELTA, fenced, every server evacuated, the notification finished', async (t) => {
    const { redis, keyPrefix, timeline } = deployment;
    await nova.signalCompute(victim, 'STOP');
    const notifiedAt = Date.now();
    const uuid = await notifyStopped(victim);

    const down = await timeline.waitFor('host.down', (event) => event.data.host === victim, 90_000);
    assert.ok((down.data.evidence.ageSeconds ?? 0) < 120, 'admitted before DELTA');
    // The verdict is kept right after host.down is published.
    const reports = new MonitorReportStore(redis, keyPrefix);
    const verdict = await waitFor(
      'the verdict',
      async () => (await reports.verdict(uuid)) ?? undefined,
      30_000,
      100,
    );
    assert.deepEqual(
      [verdict?.verdict, verdict && 'incidentId' in verdict ? verdict.incidentId : null],
      ['admitted', down.data.incidentId],
    );
    const record = await ended(uuid, 180_000);
    const finishedAt = Date.now();
    assert.equal(record.status, 'finished', JSON.stringify(record.recoveryWorkflowDetails));
    const fenced = timeline.forIncident(down.data.incidentId).find((event) => event.type === 'host.fenced');
    assert.ok(fenced, 'fenced before anything was evacuated');
    const moved: Array<[string, string, string | null | undefined, string, string]> = [];
    for (const id of servers) {
      const server = await nova.server(id);
      assert.equal(server.status, 'ACTIVE', `${server.name} is ACTIVE`);
      assert.ok(survivors.includes(server['OS-EXT-SRV-ATTR:host'] ?? ''), `${server.name} left ${victim}`);
      moved.push([id, victim, server['OS-EXT-SRV-ATTR:host'], 'evacuation', 'succeeded']);
    }
    const vmoves = await vmovesOverHttp(uuid);
    assert.deepEqual(
      vmoves
        .map((vmove) => [vmove.instance_uuid, vmove.source_host, vmove.dest_host, vmove.type, vmove.status])
        .sort(),
      moved.sort(),
      'one succeeded vmove per server moved, from the failed host to where it runs now',
    );
    assert.deepEqual(
      record.recoveryWorkflowDetails.map((detail) => [detail.name, detail.state]),
      [
        ['RecoveryMethodTask', 'SUCCESS'],
        ['HostFailureJudgedTask', 'SUCCESS'],
        ['HostRecoveryTask', 'SUCCESS'],
      ],
    );
    t.diagnostic(
      `notification → host.down ${Date.parse(down.occurredAt) - notifiedAt} ms, → ${servers.length} servers ACTIVE and the notification finished ${finishedAt - notifiedAt} ms (load ${loadavg()[0]!.toFixed(1)})`,
    );
  });
});

describe('a reserved_host segment on real Nova: the servers go to its reserved host', {
  timeout: 400_000,
}, () => {
  const nova = realNova();
  const [reservedHost, victim] = nova.hosts as [string, string];
  const servers: string[] = [];
  let deployment: RealNovaDeployment;
  let store: MasakariStore;

  before(async () => {
    await nova.restore();
    const tag = randomUUID().slice(0, 6);
    servers.push(
      ...(await nova.bootEach([0, 1].map((index) => [`segment-${tag}-${index}`, victim] as const))),
    );
    // Its operators keep the reserved host disabled, in their own words.
    const spare = await nova.service(reservedHost);
    const disabled = await nova.nova(
      'PUT',
      `/os-services/${spare.id}`,
      { status: 'disabled', disabled_reason: 'kept free for segment failover' },
      '2.53',
    );
    assert.equal(disabled.status, 200);
    deployment = await RealNovaDeployment.start({
      label: 'masakari-segment',
      fencing: 'noop',
      instanceHa: { DELTA: 120, NOVA_REPORT_INTERVAL: 2 },
      logLevel: 'info',
    });
    store = new MasakariStore({ redis: deployment.redis, keyPrefix: deployment.keyPrefix });
    await segmentOf(store, nova.hosts, 'reserved_host', [reservedHost]);
  });

  after(async () => {
    try {
      await deployment?.stop();
    } finally {
      await nova.deleteServers(servers);
      await nova.restore();
    }
  });

  it('COMPUTE_HOST STOPPED: fenced, the reserved host enabled, every server ACTIVE on it, reserved=false', async (t) => {
    const { timeline } = deployment;
    await nova.signalCompute(victim, 'STOP');
    const notifiedAt = Date.now();
    const uuid = await notifyHostStopped(deployment, store, victim);
    const down = await timeline.waitFor('host.down', (event) => event.data.host === victim, 90_000);
    const record = await notificationEnded(store, uuid, 240_000);
    assert.equal(record.status, 'finished', JSON.stringify(record.recoveryWorkflowDetails));
    const events = timeline.forIncident(down.data.incidentId);
    assert.ok(
      events.some((event) => event.type === 'host.fenced'),
      'fenced first',
    );
    const started = events.find((event) => event.type === 'host.evacuation.started');
    assert.equal(
      started?.type === 'host.evacuation.started' ? started.data.reservedHost : null,
      reservedHost,
    );
    for (const id of servers) {
      const server = await nova.server(id);
      assert.equal(server.status, 'ACTIVE', `${server.name} is ACTIVE`);
      assert.equal(server['OS-EXT-SRV-ATTR:host'], reservedHost, `${server.name} is on the reserved host`);
    }
    assert.equal((await nova.service(reservedHost)).status, 'enabled', 'the reserved host is enabled');
    assert.equal((await store.getHostByName(reservedHost))?.reserved, false, 'reserved=false');
    t.diagnostic(
      `notification → ${servers.length} servers ACTIVE on ${reservedHost} and the notification finished ${Date.now() - notifiedAt} ms (load ${loadavg()[0]!.toFixed(1)})`,
    );
  });
});
