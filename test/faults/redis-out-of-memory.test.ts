import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sleep, waitFor } from '@lifeguard/testing';
import {
  completeFromTwoConnections,
  seedBlockedPorts,
  serviceProcessSuite,
  waitForEveryPortActive,
} from '../../packages/provisioning-blocks/test/support.ts';
import { recordFaultRow } from './support/fault-table.ts';
import { metricTotal, whenMetricExceeds } from './support/metrics.ts';
import { CompletionRecorder, countCompletions } from './support/provisioning-events.ts';
import { setRedisMaxMemory } from './support/suite-engines.ts';

const PORTS = 1000;
/** How long the test watches the service while Redis refuses writes, in milliseconds. */
const REFUSED_WINDOW_MILLISECONDS = 8000;

/**
 * Redis out of memory (`maxmemory` below its use, `noeviction`) in the middle of a provisioning
 * stream (docs/failure-modes.md#brokers): writes are refused, the service says so (error log naming
 * OOM, lifeguard_redis_writes_refused 1, /readyz failing `redis-writes`), completes no port meanwhile
 * and loses none of the requests it could not apply; once memory is available it resumes.
 */
describe('Redis out of memory mid provisioning stream', () => {
  const suite = serviceProcessSuite('fault-redis-oom');

  it(`maxmemory reached during ${PORTS} ports' completions: refused and reported, nothing completed meanwhile, every port ACTIVE once memory is back`, async () => {
    const prefix = suite.keyPrefix('fault-redis-oom');
    const { stores, ids } = await seedBlockedPorts(suite.redis, prefix, PORTS, 70);
    const recorder = await CompletionRecorder.start(suite.vhost.url, 'fault.redis-oom.completions');
    const service = suite.start({
      LIFEGUARD_AMQP_URL: suite.vhost.url,
      LIFEGUARD_REDIS_KEY_PREFIX: prefix,
      LIFEGUARD_INSTANCE_NAME: 'fault-redis-oom',
      LIFEGUARD_PROVISIONING_RPC_SERVER: 'fault-oom-host',
      LIFEGUARD_PROVISIONING_NOTIFY_NOVA_ON_PORT_STATUS_CHANGES: 'false',
      LIFEGUARD_PROVISIONING_OUTBOX_CLAIM_IDLE_SECONDS: '2',
    });
    const metricsPort = await service.started(300_000);
    const completedPorts = async () =>
      (await Promise.all(ids.map((id) => stores.blocks.isObjectBlocked(id, 'port')))).filter(
        (blocked) => !blocked,
      ).length;

    let completedAtLimit = -1;
    let completedAfterWindow = -1;
    let liftedAt = 0;
    const readiness = async () =>
      (await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).json() as Promise<{
        checks: Record<string, string>;
      }>;
    try {
      await completeFromTwoConnections(suite.vhost.url, ids, {
        chunk: 50,
        beforeChunk: async (sent) => {
          if (completedAtLimit >= 0 || sent < PORTS / 2) return;
          await whenMetricExceeds(metricsPort, 'lifeguard_provisioning_outbox_published_total', 50);
          await setRedisMaxMemory(1);
          // Let the requests already taken finish or fail, then count what Redis holds.
          await sleep(1000);
          completedAtLimit = await completedPorts();
        },
      });
      // The other half of the completions is now with the service while Redis refuses every write.
      await waitFor(
        'lifeguard_redis_writes_refused 1',
        async () => (await metricTotal(metricsPort, 'lifeguard_redis_writes_refused')) === 1,
        60_000,
        100,
      );
      await waitFor(
        '/readyz failing its redis-writes check',
        async () => (await readiness()).checks['redis-writes'] === 'failing',
        30_000,
        100,
      );
      await sleep(REFUSED_WINDOW_MILLISECONDS);
      completedAfterWindow = await completedPorts();
    } finally {
      await setRedisMaxMemory(null);
      liftedAt = Date.now();
    }
    const publishedAtLift =
      (await metricTotal(metricsPort, 'lifeguard_provisioning_outbox_published_total')) ?? 0;
    const resumedAt = await whenMetricExceeds(
      metricsPort,
      'lifeguard_provisioning_outbox_published_total',
      publishedAtLift,
      300_000,
    );
    await waitForEveryPortActive('every port ACTIVE once memory is back', suite.redis, stores, ids);
    await waitFor(
      'the outbox drained',
      async () => (await suite.redis.xlen(stores.keys.outbox)) === 0,
      60_000,
    );
    await waitFor(
      'lifeguard_redis_writes_refused 0',
      async () => (await metricTotal(metricsPort, 'lifeguard_redis_writes_refused')) === 0,
      60_000,
      100,
    );
    const counted = countCompletions(ids, await recorder.drain());
    const errorLine = service.lines.find(
      (line) => line.level === 50 && /OOM/.test(String(line.msg)) && line.maxMemoryPolicy === 'noeviction',
    );
    recordFaultRow({
      fault: 'Redis out of memory (maxmemory, noeviction) mid provisioning stream',
      inFlight: `${PORTS} ports (${completedAtLimit} completed when the limit struck)`,
      eventsLost: counted.lost,
      duplicateEffects: counted.duplicated,
      secondsToResume: resumedAt === null ? null : (resumedAt - liftedAt) / 1000,
      outcome: `error log "Redis refuses writes: out of memory (OOM ...)", lifeguard_redis_writes_refused 1, /readyz 503; ${completedAfterWindow - completedAtLimit} ports completed while refused`,
    });
    assert.ok(errorLine, 'an error log line naming OOM with the memory policy');
    assert.equal(completedAfterWindow, completedAtLimit, 'ports completed while Redis refused writes');
    assert.ok(completedAtLimit < PORTS, 'completions were still to come when the limit struck');
    assert.equal(counted.lost, 0, 'ports without a provisioning.complete event');
    assert.equal(counted.duplicated, 0, 'ports completed twice under different event ids');
    assert.equal((await readiness()).checks['redis-writes'], 'ok');
    service.child.kill('SIGTERM');
    assert.equal((await service.exited()).code, 0);
  });
});
