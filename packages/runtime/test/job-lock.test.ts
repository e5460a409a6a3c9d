import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { deleteKeysWithPrefix, REDIS_URL, randomKeyPrefix, testRedis } from '@lifeguard/testing';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { assertJobLock, bullmqPrefix, JobLockLostError } from '../src/index.ts';

describe('assertJobLock on a real BullMQ job', () => {
  const redis = testRedis();
  const prefix = randomKeyPrefix('job-lock');
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue('locks', { connection: redis, prefix: bullmqPrefix(prefix) });
  const worker = new Worker('locks', null, {
    connection,
    prefix: bullmqPrefix(prefix),
    autorun: false,
    lockDuration: 5000,
  });
  after(async () => {
    await worker.close();
    await queue.close();
    await deleteKeysWithPrefix(redis, prefix);
    connection.disconnect();
    await redis.quit();
  });

  it('passes (extending the lock) for the run that holds it, throws for another run and once it lapsed', async () => {
    await queue.add('job', {}, { jobId: 'one' });
    const job = (await worker.getNextJob('run-1'))!;
    assert.equal(job.id, 'one');
    const lockKey = `${bullmqPrefix(prefix)}:locks:one:lock`;
    await redis.pexpire(lockKey, 1000);
    await assertJobLock(job, 'run-1', 5000);
    assert.ok((await redis.pttl(lockKey)) > 1000, 'extended to the lock duration');
    await assert.rejects(assertJobLock(job, 'run-2', 5000), JobLockLostError);
    await redis.del(lockKey);
    await assert.rejects(assertJobLock(job, 'run-1', 5000), (error: unknown) => {
      assert.ok(error instanceof JobLockLostError);
      assert.match(error.message, /^job one: its lock lapsed and another run may hold the job/);
      return true;
    });
    await assertJobLock(job, undefined, 5000);
  });
});
