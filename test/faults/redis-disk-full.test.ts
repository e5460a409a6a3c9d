import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { closedPort, sleep, startDetachedRedis, stopProcessGroup, waitFor } from '@lifeguard/testing';
import { Redis } from 'ioredis';
import {
  completeFromTwoConnections,
  seedBlockedPorts,
  serviceProcessSuite,
  waitForEveryPortActive,
} from '../../packages/provisioning-blocks/test/support.ts';
import { recordFaultRow } from './support/fault-table.ts';
import { metricTotal, whenMetricExceeds } from './support/metrics.ts';
import { CompletionRecorder, countCompletions } from './support/provisioning-events.ts';

const PORTS = 1000;
/** The size of the file system under Redis's data folder, in mebibytes. */
const DISK_MEBIBYTES = 24;
/** How long the test watches the service while the disk is full, in milliseconds. */
const FULL_WINDOW_MILLISECONDS = 8000;

/**
 * Fills the file system at `directory` with one file, `filler`, until the system refuses more
 * (ENOSPC), in chunks of one mebibyte.
 */
function fillDisk(filler: string): void {
  const chunk = Buffer.alloc(1024 * 1024, 0x61);
  writeFileSync(filler, '');
  for (;;) {
    try {
      writeFileSync(filler, chunk, { flag: 'a' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOSPC') return;
      throw error;
    }
  }
}

/**
 * The disk under Redis full (docs/failure-modes.md#a-full-disk-under-redis) in the middle of a
 * provisioning stream: Redis runs with append-only persistence, as production does, on a small file
 * system of the test's own (tmpfs, mounted as root), which the test fills. Redis cannot write its
 * append-only file and answers every write MISCONF; the service says so (error log with Redis's
 * words, lifeguard_redis_writes_refused 1, /readyz failing `redis-writes`), completes no port
 * meanwhile and loses none of the requests it could not apply; once space is freed Redis writes its
 * file again by itself and the service resumes.
 */
describe('the disk under Redis full mid provisioning stream', () => {
  const suite = serviceProcessSuite('fault-redis-disk');
  let mountPoint: string;
  let redisPid = 0;
  let port = 0;

  before(async () => {
    mountPoint = mkdtempSync(join(tmpdir(), 'lifeguard-disk-full-'));
    execFileSync('mount', [
      '-t',
      'tmpfs',
      '-o',
      `size=${DISK_MEBIBYTES}m`,
      'lifeguard-disk-full',
      mountPoint,
    ]);
    port = await closedPort();
    mkdirSync(join(mountPoint, 'redis'));
    redisPid = await startDetachedRedis({ port, directory: join(mountPoint, 'redis'), appendOnly: true });
  });
  after(async () => {
    if (redisPid) await stopProcessGroup(redisPid);
    if (mountPoint) {
      execFileSync('umount', [mountPoint]);
      rmSync(mountPoint, { recursive: true, force: true });
    }
  });

  it(`the disk filled during ${PORTS} ports' completions: refused and reported, nothing completed meanwhile, every port ACTIVE once space is freed`, async () => {
    const redisUrl = `redis://127.0.0.1:${port}/0`;
    const redis = new Redis(redisUrl);
    const prefix = suite.keyPrefix('fault-redis-disk');
    const filler = join(mountPoint, 'filler');
    const { stores, ids } = await seedBlockedPorts(redis, prefix, PORTS, 80);
    const recorder = await CompletionRecorder.start(suite.vhost.url, 'fault.redis-disk.completions');
    const service = suite.start({
      LIFEGUARD_AMQP_URL: suite.vhost.url,
      LIFEGUARD_REDIS_URL: redisUrl,
      LIFEGUARD_REDIS_KEY_PREFIX: prefix,
      LIFEGUARD_INSTANCE_NAME: 'fault-redis-disk',
      LIFEGUARD_PROVISIONING_RPC_SERVER: 'fault-disk-host',
      LIFEGUARD_PROVISIONING_NOTIFY_NOVA_ON_PORT_STATUS_CHANGES: 'false',
      LIFEGUARD_PROVISIONING_OUTBOX_CLAIM_IDLE_SECONDS: '2',
    });
    const metricsPort = await service.started(300_000);
    const completedPorts = async () =>
      (await Promise.all(ids.map((id) => stores.blocks.isObjectBlocked(id, 'port')))).filter(
        (blocked) => !blocked,
      ).length;
    const readiness = async () =>
      (await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).json() as Promise<{
        checks: Record<string, string>;
      }>;

    let completedWhenFull = -1;
    let completedAfterWindow = -1;
    let freedAt = 0;
    try {
      await completeFromTwoConnections(suite.vhost.url, ids, {
        chunk: 50,
        beforeChunk: async (sent) => {
          if (completedWhenFull >= 0 || sent < PORTS / 2) return;
          await whenMetricExceeds(metricsPort, 'lifeguard_provisioning_outbox_published_total', 50);
          fillDisk(filler);
          // Redis finds out at its next append-only write: wait until it refuses one, then let the
          // requests already taken finish or fail, and count what Redis holds.
          await waitFor(
            'Redis refusing writes with MISCONF',
            async () =>
              (await redis.set(`${prefix}:probe`, '1').catch((error: Error) => error.message)) !== 'OK',
            30_000,
            100,
          );
          await sleep(1000);
          completedWhenFull = await completedPorts();
        },
      });
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
      await sleep(FULL_WINDOW_MILLISECONDS);
      completedAfterWindow = await completedPorts();
    } finally {
      rmSync(filler, { force: true });
      freedAt = Date.now();
    }
    const publishedAtFree =
      (await metricTotal(metricsPort, 'lifeguard_provisioning_outbox_published_total')) ?? 0;
    const resumedAt = await whenMetricExceeds(
      metricsPort,
      'lifeguard_provisioning_outbox_published_total',
      publishedAtFree,
      300_000,
    );
    await waitForEveryPortActive('every port ACTIVE once space is freed', redis, stores, ids);
    await waitFor('the outbox drained', async () => (await redis.xlen(stores.keys.outbox)) === 0, 60_000);
    await waitFor(
      'lifeguard_redis_writes_refused 0',
      async () => (await metricTotal(metricsPort, 'lifeguard_redis_writes_refused')) === 0,
      60_000,
      100,
    );
    const counted = countCompletions(ids, await recorder.drain());
    const errorLine = service.lines.find(
      (line) => line.level === 50 && line.refusal === 'disk' && /^MISCONF/.test(String(line.redisError)),
    );
    recordFaultRow({
      fault: 'The disk under Redis full (append-only file) mid provisioning stream',
      inFlight: `${PORTS} ports (${completedWhenFull} completed when the disk filled)`,
      eventsLost: counted.lost,
      duplicateEffects: counted.duplicated,
      secondsToResume: resumedAt === null ? null : (resumedAt - freedAt) / 1000,
      outcome: `error log "Redis refuses writes: it cannot write to its disk (MISCONF ...)", lifeguard_redis_writes_refused 1, /readyz 503; ${completedAfterWindow - completedWhenFull} ports completed while refused`,
    });
    assert.ok(errorLine, 'an error log line with the refusal kind and Redis’s MISCONF message');
    assert.equal(completedAfterWindow, completedWhenFull, 'ports completed while Redis refused writes');
    assert.ok(completedWhenFull < PORTS, 'completions were still to come when the disk filled');
    assert.equal(counted.lost, 0, 'ports without a provisioning.complete event');
    assert.equal(counted.duplicated, 0, 'ports completed twice under different event ids');
    assert.equal((await readiness()).checks['redis-writes'], 'ok');
    service.child.kill('SIGTERM');
    assert.equal((await service.exited()).code, 0);
    await redis.quit();
  });
});
