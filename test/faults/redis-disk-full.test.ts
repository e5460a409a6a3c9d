import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { closedPort, startDetachedRedis, stopProcessGroup, waitFor } from '@lifeguard/testing';
import { Redis } from 'ioredis';
import { serviceProcessSuite } from '../../packages/provisioning-blocks/test/support.ts';
import { recordAndCheckWritesRefused, runWritesRefusedStream } from './support/writes-refused-stream.ts';

const PORTS = 1000;
/** The size of the file system under Redis's data folder, in mebibytes. */
const DISK_MEBIBYTES = 24;

/** Fills the file system holding `filler` with that one file, a mebibyte at a time, until it is full (ENOSPC). */
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
    const filler = join(mountPoint, 'filler');
    const outcome = await runWritesRefusedStream({
      suite,
      redis,
      redisUrl,
      label: 'fault-redis-disk',
      ports: PORTS,
      refuse: async () => {
        fillDisk(filler);
        // Redis finds out at its next append-only write: wait until it refuses one.
        await waitFor(
          'Redis refusing writes with MISCONF',
          async () =>
            (await redis.set('fault-redis-disk:probe', '1').catch((error: Error) => error.message)) !== 'OK',
          30_000,
          100,
        );
      },
      restore: async () => rmSync(filler, { force: true }),
    });
    const { service } = outcome;
    const errorLine = service.lines.find(
      (line) => line.level === 50 && line.refusal === 'disk' && /^MISCONF/.test(String(line.redisError)),
    );
    await recordAndCheckWritesRefused(outcome, {
      fault: 'The disk under Redis full (append-only file) mid provisioning stream',
      ports: PORTS,
      struck: 'the disk filled',
      operatorSees: 'error log "Redis refuses writes: it cannot write to its disk (MISCONF ...)"',
    });
    assert.ok(errorLine, 'an error log line with the refusal kind and Redis’s MISCONF message');
    await redis.quit();
  });
});
