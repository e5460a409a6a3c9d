// Redis Sentinel: the master is killed (SIGKILL) in the middle of an incident, and in the middle of
// a provisioning stream. The file starts its own master, one replica and three Sentinels (quorum 2,
// down-after 1 s) on loopback ports. The first test runs lifeguard through the Sentinels, kills a
// compute host, and kills the master once host.down is out; the Sentinels promote the replica, the
// workers follow it, and the incident must still end with one fence, one evacuation per server and
// every event published. The second brings the killed node back as a replica of the new master, runs
// the provisioning service through the Sentinels while agents complete ports over AMQP, and kills
// the master half-way: every port must end ACTIVE with exactly one provisioning.complete event.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  type PrivateSentinelSet,
  randomKeyPrefix,
  startPrivateSentinelSet,
  waitFor,
} from '@lifeguard/testing';
import { Redis } from 'ioredis';
import {
  completeFromTwoConnections,
  seedBlockedPorts,
  serviceProcessSuite,
} from '../../packages/provisioning-blocks/test/support.ts';
import { incidentAcrossFailover, reportFailover } from './support/failover-incident.ts';
import { recordFaultRow } from './support/fault-table.ts';
import { metricTotal, whenMetricExceeds } from './support/metrics.ts';
import { CompletionRecorder, countCompletions } from './support/provisioning-events.ts';

/** Ports completed in the stream test: 20–30 s of agent messages on 2 cores. */
const STREAM_PORTS = 6000;
/** Pino's level number for warn. */
const WARN = 40;

describe('Redis Sentinel failover', { timeout: 900_000 }, () => {
  let sentinels: PrivateSentinelSet;

  before(async () => {
    sentinels = await startPrivateSentinelSet({ sentinels: 3, replicas: 1, downAfterMilliseconds: 1000 });
  });

  after(async () => {
    await sentinels?.stop();
  });

  it('the master killed mid incident: the Sentinels promote the replica, one fence, one evacuation per server, no event lost', async (t) => {
    const result = await incidentAcrossFailover({
      label: 'fault-sentinel',
      keyPrefix: randomKeyPrefix('fault-sentinel'),
      redisUrl: sentinels.url,
      redisTopology: { sentinels: sentinels.sentinelList, sentinelName: sentinels.masterName },
      strike: async () => {
        const master = await sentinels.masterPort();
        const killedAt = Date.now();
        await sentinels.killNode(master);
        const promoted = await sentinels.waitForNewMaster(master, 60_000);
        return {
          killedAt,
          servingAgainAt: Date.now(),
          description: `master ${master} killed, replica ${promoted} promoted`,
        };
      },
    });
    reportFailover(
      (message) => t.diagnostic(message),
      'Redis Sentinel: master killed (SIGKILL) mid incident',
      result,
    );
  });

  describe('the Redis master killed mid provisioning stream', () => {
    const suite = serviceProcessSuite('fault-sentinel-pb');

    it(`${STREAM_PORTS} ports completed by agents' casts across a Sentinel failover: every port ACTIVE, no completion lost or doubled`, async (t) => {
      // The first test left its master dead: bring it back as a replica so there is one to promote.
      const master = await sentinels.restartKilledAsReplicas();
      assert.equal((await sentinels.onlineReplicas(master)).length, 1, 'the master has an online replica');
      const redis = new Redis({
        sentinels: sentinels.sentinelList.split(',').map((address) => {
          const [host, port] = address.split(':');
          return { host: host!, port: Number(port) };
        }),
        name: sentinels.masterName,
        maxRetriesPerRequest: null,
      });
      redis.on('error', () => undefined);
      const prefix = randomKeyPrefix('fault-sentinel-pb');
      const service = suite.start({
        LIFEGUARD_REDIS_URL: sentinels.url,
        LIFEGUARD_REDIS_SENTINELS: sentinels.sentinelList,
        LIFEGUARD_REDIS_SENTINEL_NAME: sentinels.masterName,
        LIFEGUARD_AMQP_URL: suite.vhost.url,
        LIFEGUARD_REDIS_KEY_PREFIX: prefix,
        LIFEGUARD_INSTANCE_NAME: 'fault-sentinel-pb',
        LIFEGUARD_PROVISIONING_RPC_SERVER: 'fault-sentinel-host',
        LIFEGUARD_PROVISIONING_NOTIFY_NOVA_ON_PORT_STATUS_CHANGES: 'false',
        LIFEGUARD_PROVISIONING_OUTBOX_CLAIM_IDLE_SECONDS: '2',
      });
      try {
        const { stores, ids } = await seedBlockedPorts(redis, prefix, STREAM_PORTS, 62);
        const recorder = await CompletionRecorder.start(suite.vhost.url, 'fault.sentinel-pb.completions');
        const metricsPort = await service.started(300_000);
        const started = Date.now();
        let killedAt = 0;
        let publishedAtKill = 0;
        let failover: Promise<{ promoted: number; at: number; published: number }> | null = null;
        await completeFromTwoConnections(suite.vhost.url, ids, {
          chunk: 100,
          beforeChunk: async (sent) => {
            if (failover || sent < STREAM_PORTS / 2) return;
            await whenMetricExceeds(metricsPort, 'lifeguard_provisioning_outbox_published_total', 100);
            publishedAtKill =
              (await metricTotal(metricsPort, 'lifeguard_provisioning_outbox_published_total')) ?? 0;
            killedAt = Date.now();
            await sentinels.killNode(master);
            failover = sentinels.waitForNewMaster(master, 60_000).then(async (promoted) => ({
              promoted,
              at: Date.now(),
              published:
                (await metricTotal(metricsPort, 'lifeguard_provisioning_outbox_published_total')) ?? 0,
            }));
          },
        });
        assert.ok(failover, 'the master was killed');
        const { promoted, at: servingAgainAt, published } = await (failover as NonNullable<typeof failover>);
        const resumedAt = await whenMetricExceeds(
          metricsPort,
          'lifeguard_provisioning_outbox_published_total',
          published,
          120_000,
        );
        const activeCount = async () =>
          (await Promise.all(ids.map((id) => redis.hget(stores.keys.port(id), 'status')))).filter(
            (status) => status === '"ACTIVE"',
          ).length;
        await waitFor(
          'every port ACTIVE',
          async () => (await activeCount()) === STREAM_PORTS,
          120_000,
          1000,
        ).catch(() => undefined);
        await waitFor(
          'the outbox drained',
          async () => (await redis.xlen(stores.keys.outbox)) === 0,
          60_000,
        ).catch(() => undefined);
        const active = await activeCount();
        const counted = countCompletions(ids, await recorder.drain());
        const warningLines = service.lines.filter(
          (line) => Number(line.level) >= WARN && /redis|sentinel|ECONNREFUSED/i.test(JSON.stringify(line)),
        );
        const warnings = warningLines.length;
        const messages = [...new Set(warningLines.map((line) => String(line.msg)))];
        const secondsToResume = resumedAt === null ? null : (resumedAt - servingAgainAt) / 1000;
        t.diagnostic(
          `${publishedAtKill} completions published at the kill; ${STREAM_PORTS} ports in ${((Date.now() - started) / 1000).toFixed(1)} s; master ${master} killed, ` +
            `${promoted} promoted after ${((servingAgainAt - killedAt) / 1000).toFixed(1)} s; completions resumed ` +
            `${secondsToResume} s later; ${active} ports ACTIVE; ${counted.lost} lost, ${counted.duplicated} doubled, ` +
            `${counted.deliveries} deliveries; ${warnings} warn+ lines naming Redis: ${messages.join(' | ')}`,
        );
        recordFaultRow({
          fault: 'Redis Sentinel: master killed (SIGKILL) mid provisioning stream',
          inFlight: `${STREAM_PORTS} ports (dhcp_ready_on_ports and update_device_up casts; ${publishedAtKill} completed at the kill)`,
          eventsLost: counted.lost,
          duplicateEffects: counted.duplicated,
          secondsToResume,
          outcome: `${active} of ${STREAM_PORTS} ports ACTIVE; failover ${((servingAgainAt - killedAt) / 1000).toFixed(1)} s; ${warnings} warn lines naming Redis`,
        });
        assert.equal(active, STREAM_PORTS, 'ports ACTIVE');
        assert.equal(counted.lost, 0, 'ports without a provisioning.complete event');
        assert.equal(counted.duplicated, 0, 'ports completed twice under different event ids');
        assert.equal(service.child.exitCode, null, 'the service kept running');
      } finally {
        await service.kill();
        redis.disconnect();
      }
    });
  });
});
