// A Masakari segment's recovery_method and reserved hosts govern the evacuation of its hosts, end to
// end: lifeguard deployed as `npm start` runs it on cloud-sim (every worker its own process, real
// RabbitMQ and Redis, hosts fenced through their simulated BMCs), a hostmonitor's COMPUTE_HOST STOPPED
// stored and queued as the Masakari API does. A `reserved_host` segment sends every server of the
// failed host to its reserved host (kept disabled by its operators, with their own words), which is
// enabled and marked reserved=false, while lifeguard's own pool (RESERVED_HOSTS) is left alone; a
// `reserved_host` segment whose reserved host cannot take servers evacuates nothing and its
// notification ends `error`, the host left fenced and disabled for a person.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { masakariNotificationJobId } from '@lifeguard/contracts';
import { parseDisabledReason } from '@lifeguard/instance-ha';
import {
  type HostRecord,
  MASAKARI_NOTIFICATION_JOB_NAME,
  MASAKARI_NOTIFICATION_QUEUE,
  MasakariStore,
  parseDateTime,
  type RecoveryMethod,
  SegmentWrites,
} from '@lifeguard/masakari-api';
import { bullmqPrefix } from '@lifeguard/runtime';
import { waitFor } from '@lifeguard/testing';
import { Queue } from 'bullmq';
import { SimulatedDeployment } from '../../../test/e2e/support/simulated-deployment.ts';

describe("a Masakari segment's recovery_method on cloud-sim, lifeguard deployed as npm start runs it", {
  timeout: 400_000,
}, () => {
  let deployment: SimulatedDeployment;
  let store: MasakariStore;
  let writes: SegmentWrites;

  /** A segment with its hosts; `reserved` and `onMaintenance` name the flagged ones. */
  const segment = async (
    recoveryMethod: RecoveryMethod,
    hosts: ReadonlyArray<string>,
    flags: { reserved?: ReadonlyArray<string>; onMaintenance?: ReadonlyArray<string> },
  ): Promise<HostRecord[]> => {
    const created = await writes.createSegment({
      name: `segment-${randomUUID().slice(0, 6)}`,
      description: null,
      serviceType: 'COMPUTE',
      recoveryMethod,
      enabled: true,
    });
    const records: HostRecord[] = [];
    for (const name of hosts)
      records.push(
        await writes.createHost(
          created.uuid,
          {
            name,
            type: 'COMPUTE',
            controlAttributes: 'SSH',
            reserved: flags.reserved?.includes(name) ?? false,
            onMaintenance: flags.onMaintenance?.includes(name) ?? false,
          },
          async () => undefined,
        ),
      );
    return records;
  };

  /** Stores a COMPUTE_HOST STOPPED about `host` (the hostmonitor's body) and queues it, as the Masakari API does. */
  const notifyStopped = async (host: string): Promise<string> => {
    const created = await store.createNotification(
      {
        type: 'COMPUTE_HOST',
        hostname: host,
        generatedTime: parseDateTime(new Date().toISOString())!,
        payload: { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' },
      },
      180,
    );
    const queue = new Queue(MASAKARI_NOTIFICATION_QUEUE, {
      connection: deployment.redis,
      prefix: bullmqPrefix(deployment.keyPrefix),
    });
    await queue.add(
      MASAKARI_NOTIFICATION_JOB_NAME,
      { notificationUuid: created.notificationUuid },
      { jobId: masakariNotificationJobId(created.notificationUuid) },
    );
    await queue.close();
    return created.notificationUuid;
  };

  /** The notification once it left `new` and `running`. */
  const ended = (uuid: string) =>
    waitFor(
      `notification ${uuid} ended`,
      async () => {
        const current = await store.getNotification(uuid);
        return current && current.status !== 'running' && current.status !== 'new' ? current : undefined;
      },
      180_000,
      200,
    );

  before(async () => {
    deployment = await SimulatedDeployment.start({
      label: 'masakari-segment',
      // compute-01..04 protected, 05..06 unprotected, 07..08 spares in lifeguard's pool.
      cloud: { hosts: 8, serversPerHost: 3, reportIntervalSeconds: 1, serviceDownTimeSeconds: 4 },
      // DELTA is long: only the monitor's report fails a host within this test. Every server counts.
      instanceHa: {
        POLL: '2',
        DELTA: '60',
        NOVA_REPORT_INTERVAL: '1',
        TAGGED_IMAGES: 'false',
        TAGGED_FLAVORS: 'false',
        RESERVED_HOSTS: 'true',
      },
      workerEnvironment: {
        'masakari-engine': {
          LIFEGUARD_MASAKARI_WATCH_SECONDS: '0.2',
          // An `error` stays `error` for the test to see (Masakari's retry comes much later).
          LIFEGUARD_MASAKARI_RETRY_SECONDS: '3600',
        },
      },
    });
    store = new MasakariStore({ redis: deployment.redis, keyPrefix: deployment.keyPrefix });
    writes = new SegmentWrites(store);
  });

  after(async () => {
    await deployment?.stop();
  });

  it('reserved_host: every server of the failed host lands on the segment reserved host, which is enabled and marked reserved=false', async (t) => {
    const { sim, layout, timeline, run } = deployment;
    const [victim, other] = layout.protectedHosts as [string, string];
    const [reservedHost, poolSpare] = layout.reservedHosts as [string, string];
    // The operators keep the reserved host disabled in their own words: not lifeguard's pool.
    sim.model.host(reservedHost).disabledReason = 'kept free for segment failover';
    await segment('reserved_host', [victim, other, reservedHost], { reserved: [reservedHost] });
    const servers = sim.model.servers.onHost(victim).map((server) => server.id);
    assert.equal(servers.length, 3);

    await run.keepingLinesOnFailure('segment-reserved-host', async () => {
      const killedAt = Date.now();
      sim.killHost(victim);
      const uuid = await notifyStopped(victim);
      const down = await timeline.waitFor('host.down', (event) => event.data.host === victim, 60_000);
      const record = await ended(uuid);
      assert.equal(record.status, 'finished', JSON.stringify(record.recoveryWorkflowDetails));
      const started = timeline
        .forIncident(down.data.incidentId)
        .find((event) => event.type === 'host.evacuation.started');
      assert.equal(
        started?.type === 'host.evacuation.started' ? started.data.reservedHost : undefined,
        reservedHost,
      );
      for (const id of servers) {
        const server = sim.model.servers.get(id)!;
        assert.equal(server.host, reservedHost, `${server.name} is on the segment reserved host`);
        assert.equal(server.vmState, 'active', `${server.name} is ACTIVE`);
      }
      assert.equal(sim.model.host(reservedHost).disabled, false, 'the reserved host is enabled');
      assert.equal((await store.getHostByName(reservedHost))?.reserved, false, 'reserved=false');
      assert.equal((await store.getHostByName(other))?.reserved, false);
      assert.equal(sim.model.host(poolSpare).disabled, true, "lifeguard's own pool is not used");
      assert.deepEqual(sim.model.servers.onHost(poolSpare), []);
      assert.deepEqual(
        record.recoveryWorkflowDetails.map((detail) => [detail.name, detail.state]),
        [
          ['RecoveryMethodTask', 'SUCCESS'],
          ['HostFailureJudgedTask', 'SUCCESS'],
          ['ReservedHostTask', 'SUCCESS'],
          ['HostRecoveryTask', 'SUCCESS'],
        ],
      );
      t.diagnostic(
        `kill → ${servers.length} servers ACTIVE on ${reservedHost} and the notification finished: ${Date.now() - killedAt} ms (load ${loadavg()[0]!.toFixed(1)})`,
      );
    });
  });

  it('reserved_host with no usable reserved host: nothing evacuated, the notification error, the host left fenced and disabled', async () => {
    const { sim, layout, timeline, run } = deployment;
    const victim = layout.protectedHosts[2]!;
    const poolSpare = layout.reservedHosts[1]!;
    // compute-99 is no compute host of Nova; the pool spare is on maintenance in the segment.
    await segment('reserved_host', [victim, 'compute-99', poolSpare], {
      reserved: ['compute-99', poolSpare],
      onMaintenance: [poolSpare],
    });
    const servers = sim.model.servers.onHost(victim).map((server) => server.id);
    assert.equal(servers.length, 3);

    await run.keepingLinesOnFailure('segment-no-reserved-host', async () => {
      sim.killHost(victim);
      const uuid = await notifyStopped(victim);
      const down = await timeline.waitFor('host.down', (event) => event.data.host === victim, 60_000);
      const record = await ended(uuid);
      assert.equal(record.status, 'error', JSON.stringify(record.recoveryWorkflowDetails));
      const recovery = record.recoveryWorkflowDetails.find((detail) => detail.name === 'HostRecoveryTask');
      assert.match(
        recovery?.progressDetails[0]?.message ?? '',
        /No reserved_hosts available for evacuation: recovery_method reserved_host of segment .*: no usable reserved host \(compute-99: Nova lists no nova-compute service for it\)/,
      );
      const failed = await timeline.waitFor(
        'host.evacuation.failed',
        (event) => event.data.incidentId === down.data.incidentId,
        10_000,
      );
      assert.match(failed.data.reason, /no usable reserved host/);
      assert.deepEqual([...failed.data.failedInstances].sort(), [...servers].sort());
      const incident = timeline.forIncident(down.data.incidentId).map((event) => event.type);
      assert.ok(incident.includes('host.fenced'), 'fenced first');
      assert.ok(!incident.includes('host.evacuation.started'), 'no evacuation started');
      for (const id of servers) {
        assert.equal(sim.model.servers.get(id)!.host, victim, 'still on the failed host');
        assert.equal(sim.evacuateCalls(id), 0, 'never evacuated');
      }
      const host = sim.model.host(victim);
      assert.equal(host.forcedDown, true, 'the host stays forced down');
      assert.equal(host.disabled, true);
      assert.equal(parseDisabledReason(host.disabledReason).kind, 'failed', host.disabledReason ?? '');
      assert.equal(sim.model.host(poolSpare).disabled, true, 'a reserved host on maintenance is never used');
      const alert = run
        .records('evacuation-worker')
        .find((line) => String(line.msg).startsWith(`ALERT: evacuation of ${victim} FAILED`));
      assert.match(String(alert?.msg), /no usable reserved host/);
      const engine = run
        .records('masakari-engine')
        .find((line) => String(line.msg).startsWith(`notification ${uuid} error`));
      assert.match(String(engine?.msg), /No reserved_hosts available for evacuation/);
    });
  });
});
