// The Masakari engine against real Nova (test/harness/real-nova) and a node monitor as operators run
// it: notifications stored as masakari-api stores them and queued as it queues them, processed by the
// engine. PROCESS disables and enables a compute service under lifeguard's marker (never one an
// operator disabled); COMPUTE_HOST is a report the node monitor judges: a host that is alive changes
// nothing, a host whose nova-compute died is admitted by the gates before DELTA.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { masakariNotificationJobId } from '@lifeguard/contracts';
import { IncidentStore, MonitorReportStore, parseDisabledReason } from '@lifeguard/instance-ha';
import {
  MASAKARI_NOTIFICATION_JOB_NAME,
  MASAKARI_NOTIFICATION_QUEUE,
  MasakariStore,
  type NotificationRecord,
  type NotificationType,
  parseDateTime,
  SegmentWrites,
} from '@lifeguard/masakari-api';
import { type CloudConfig, createOpenStackClients } from '@lifeguard/openstack';
import { bullmqPrefix, connectRedis, createLogger, createMetricsRegistry } from '@lifeguard/runtime';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  REDIS_URL,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import { Queue } from 'bullmq';
import { captureEvents, type EventCapture } from '../../node-monitor/test/support/event-capture.ts';
import {
  type MonitorProcess,
  startMonitorProcess,
  writeInstanceHaConfig,
} from '../../node-monitor/test/support/monitor-process.ts';
import { realNova } from '../../node-monitor/test/support/real-nova.ts';
import { MasakariEngine } from '../src/index.ts';

describe('Masakari engine on real Nova', () => {
  const cloud = realNova();
  const [, dead, alive] = cloud.hosts as [string, string, string];
  const redis = testRedis();
  const prefix = randomKeyPrefix('masakari-engine');
  const store = new MasakariStore({ redis, keyPrefix: prefix });
  const queue = new Queue(MASAKARI_NOTIFICATION_QUEUE, { connection: redis, prefix: bullmqPrefix(prefix) });
  let engine: MasakariEngine;
  let monitor: MonitorProcess;
  let vhost: TestVhost;
  let events: EventCapture;

  /** Stores a notification as masakari-api does, queues its job, and waits until it ends (or `until`). */
  const notify = async (
    type: NotificationType,
    hostname: string,
    payload: Record<string, string>,
    until: (record: NotificationRecord) => boolean = (record) =>
      ['finished', 'ignored', 'failed', 'error'].includes(record.status),
  ): Promise<NotificationRecord> => {
    const created = await store.createNotification(
      { type, hostname, generatedTime: parseDateTime(new Date().toISOString())!, payload },
      0,
    );
    const uuid = created.notificationUuid;
    await queue.add(
      MASAKARI_NOTIFICATION_JOB_NAME,
      { notificationUuid: uuid },
      { jobId: masakariNotificationJobId(uuid) },
    );
    return waitFor(
      `notification ${uuid} (${type} ${JSON.stringify(payload)})`,
      async () => {
        const record = await store.getNotification(uuid);
        return record && until(record) ? record : undefined;
      },
      60_000,
      100,
    );
  };

  before(async () => {
    vhost = await createTestVhost('masakari-engine');
    events = await captureEvents(vhost.url);
    await cloud.restore();
    const writes = new SegmentWrites(store);
    const segment = await writes.createSegment({
      name: 'segment-1',
      description: null,
      serviceType: 'COMPUTE',
      recoveryMethod: 'auto',
      enabled: true,
    });
    for (const name of cloud.hosts)
      await writes.createHost(
        segment.uuid,
        { name, type: 'COMPUTE', controlAttributes: 'SSH', reserved: false, onMaintenance: false },
        async () => undefined,
      );
    const config = {
      name: 'real-nova',
      source: 'test',
      authType: 'admin_token',
      auth: { token: cloud.token },
      regionName: null,
      interface: 'public',
      endpointOverrides: { compute: cloud.novaUrl, image: cloud.glanceUrl },
      apiTimeoutSeconds: null,
    } as CloudConfig;
    const logger = createLogger({ service: 'masakari-engine', level: 'warn' });
    engine = await MasakariEngine.start({
      settings: {
        concurrency: 4,
        retryMilliseconds: 60_000,
        verdictTimeoutMilliseconds: 60_000,
        recoveryTimeoutMilliseconds: 120_000,
        instanceRestartTimeoutMilliseconds: 60_000,
        serviceUpdateTimeoutMilliseconds: 30_000,
        watchMilliseconds: 100,
        jobLock: { lockDuration: 30_000, stalledInterval: 30_000, maxStalledCount: 2 },
      },
      config: { reservedHosts: false, forceReservedHostEvacuation: false, disabled: false },
      redis,
      workerRedis: await connectRedis(
        { url: REDIS_URL, keyPrefix: prefix },
        'worker',
        'masakari-engine-test',
        logger,
      ),
      keyPrefix: prefix,
      compute: createOpenStackClients({ config }).compute,
      logger,
      registry: createMetricsRegistry('masakari-engine'),
    });
    // DELTA is long: only a monitor report can fail a host within these tests.
    monitor = startMonitorProcess('monitor-masakari', {
      ...cloud.monitorEnv(vhost.url, prefix, 3),
      INSTANCEHA_CONFIG_PATH: writeInstanceHaConfig({
        POLL: 15,
        DELTA: 120,
        THRESHOLD: 100,
        TAGGED_AGGREGATES: false,
        TAGGED_IMAGES: false,
        TAGGED_FLAVORS: false,
        NOVA_REPORT_INTERVAL: 2,
      }),
    });
    await monitor.ready();
  });

  after(async () => {
    monitor?.kill('SIGKILL');
    await monitor?.exited;
    await engine?.close(2000);
    await queue.close();
    await cloud.restoreHostsAndDelete([]);
    await events?.close();
    await vhost?.delete();
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  it("PROCESS nova-compute STOPPED disables the compute service under lifeguard's marker, STARTED enables it", async () => {
    const stopped = await notify('PROCESS', alive, { event: 'STOPPED', process_name: 'nova-compute' });
    assert.equal(stopped.status, 'finished', JSON.stringify(stopped.recoveryWorkflowDetails));
    const disabled = await cloud.service(alive);
    assert.equal(disabled.status, 'disabled');
    const marker = parseDisabledReason(disabled.disabled_reason);
    assert.deepEqual([marker.kind, marker.origin], ['process-stopped', 'lifeguard']);
    assert.equal(disabled.forced_down, false, 'nothing fenced');
    assert.deepEqual(
      stopped.recoveryWorkflowDetails.map((detail) => [detail.name, detail.state]),
      [
        ['DisableComputeNodeTask', 'SUCCESS'],
        ['ConfirmComputeNodeDisabledTask', 'SUCCESS'],
      ],
    );
    const started = await notify('PROCESS', alive, { event: 'STARTED', process_name: 'nova-compute' });
    assert.equal(started.status, 'finished');
    assert.equal((await cloud.service(alive)).status, 'enabled');
  });

  it('a compute service an operator disabled is neither marked nor enabled', async () => {
    await cloud.updateService(alive, { status: 'disabled', disabled_reason: 'maintenance window' });
    const stopped = await notify('PROCESS', alive, { event: 'STOPPED', process_name: 'nova-compute' });
    assert.equal(stopped.status, 'finished');
    assert.equal((await cloud.service(alive)).disabled_reason, 'maintenance window');
    const started = await notify('PROCESS', alive, { event: 'STARTED', process_name: 'nova-compute' });
    assert.equal(started.status, 'finished');
    const after = await cloud.service(alive);
    assert.deepEqual([after.status, after.disabled_reason], ['disabled', 'maintenance window']);
    await cloud.updateService(alive, { status: 'enabled' });
  });

  it('COMPUTE_HOST STOPPED for a host that is alive is ignored: nothing fenced, no incident', async () => {
    const record = await notify('COMPUTE_HOST', alive, {
      event: 'STOPPED',
      host_status: 'NORMAL',
      cluster_status: 'OFFLINE',
    });
    assert.equal(record.status, 'ignored', JSON.stringify(record.recoveryWorkflowDetails));
    const verdict = await new MonitorReportStore(redis, prefix).verdict(record.notificationUuid);
    assert.equal(verdict?.verdict, 'refused');
    assert.match(verdict?.reason ?? '', /reported .* after the monitor's report: the host runs/);
    assert.deepEqual(events.ofType('host.down'), []);
    assert.equal(await new IncidentStore(redis, prefix).getOpenIncident(alive), null);
    assert.equal((await cloud.service(alive)).forced_down, false);
  });

  it('COMPUTE_HOST STOPPED for a host whose nova-compute died is admitted by the gates before DELTA', async () => {
    const server = await cloud.boot('masakari-engine-victim', dead);
    try {
      await cloud.killCompute(dead);
      const record = await notify(
        'COMPUTE_HOST',
        dead,
        { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' },
        (each) => each.recoveryWorkflowDetails.some((detail) => detail.name === 'HostFailureJudgedTask'),
      );
      const verdict = await new MonitorReportStore(redis, prefix).verdict(record.notificationUuid);
      assert.equal(verdict?.verdict, 'admitted', JSON.stringify(verdict));
      const [down] = events.ofType('host.down');
      assert.equal(down?.data.host, dead);
      assert.ok((down?.data.evidence.ageSeconds ?? 0) < 120, 'failed before DELTA');
      // No fencing worker runs here: the incident stays open, and so does the notification.
      assert.equal((await store.getNotification(record.notificationUuid))?.status, 'running');
    } finally {
      await cloud.restoreHostsAndDelete([server]);
    }
  });
});
