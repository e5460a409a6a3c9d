import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type InstanceRestartJob, instanceRestartJobId, JOB_QUEUES } from '@lifeguard/contracts';
import { bullmqPrefix, createLogger } from '@lifeguard/runtime';
import { CapturedLines, deleteKeysWithPrefix, randomKeyPrefix, testRedis, waitFor } from '@lifeguard/testing';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { InstanceMonitor } from '../src/index.ts';
import { LIBVIRTD, type PrivateLibvirtd, startPrivateLibvirtd } from './support/private-libvirtd.ts';

const prefix = randomKeyPrefix('instance-monitor');
let libvirtd: PrivateLibvirtd;
let redis: Redis;
let queue: Queue;
let monitor: InstanceMonitor;
let domainUuid: string;
const added: Array<{ job: InstanceRestartJob; jobId: string }> = [];
const logs = new CapturedLines();

before(async () => {
  assert.ok(
    existsSync(LIBVIRTD),
    'libvirtd is installed (Debian packages libvirt-daemon and libvirt-clients)',
  );
  libvirtd = await startPrivateLibvirtd();
  domainUuid = (await libvirtd.virsh('domuuid', 'test')).trim();
  redis = testRedis();
  queue = new Queue(JOB_QUEUES.instanceRestart, { connection: redis, prefix: bullmqPrefix(prefix) });
  monitor = new InstanceMonitor({
    virsh: 'virsh',
    uri: libvirtd.uri,
    host: 'compute-1',
    queue,
    logger: createLogger({ service: 'instance-monitor', level: 'info', destination: logs }),
    onJob: (job, jobId) => added.push({ job, jobId }),
  });
  await monitor.start();
});

after(async () => {
  await monitor?.stop();
  await queue?.close();
  await libvirtd?.stop();
  if (redis) {
    await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
  }
});

describe('instance monitor on a real libvirtd (test driver) through virsh event', () => {
  it('turns the domain events of another client into instance-restart jobs for the domain uuid, as Masakari’s monitor filters them', async () => {
    // virsh event subscribes asynchronously: repeat the first action until its event is seen.
    await waitFor(
      'the destroy event',
      async () => {
        if (added.length > 0) return true;
        // One virsh run for both commands (virsh reads `;`-separated commands).
        await libvirtd.virsh('destroy test; start test').catch(() => undefined);
        return false;
      },
      30_000,
      1000,
    );
    const before = added.length;
    await libvirtd.virsh('shutdown test; start test; suspend test; resume test');
    await waitFor('the shutdown event', () =>
      added.slice(before).some((each) => each.job.failure.virDomainEvent === 'STOPPED_SHUTDOWN'),
    );

    const kinds = new Set(
      added.map((each) => `${each.job.failure.event}/${each.job.failure.virDomainEvent}`),
    );
    assert.ok(kinds.has('LIFECYCLE/STOPPED_DESTROYED'), [...kinds].join(', '));
    assert.ok(kinds.has('LIFECYCLE/STOPPED_SHUTDOWN'), [...kinds].join(', '));
    for (const kind of kinds)
      assert.ok(
        ['LIFECYCLE/STOPPED_DESTROYED', 'LIFECYCLE/STOPPED_SHUTDOWN', 'LIFECYCLE/SHUTDOWN_FINISHED'].includes(
          kind,
        ),
        `${kind} is in Masakari's filter table`,
      );

    for (const { job, jobId } of added) {
      assert.equal(job.instanceId, domainUuid);
      assert.equal(job.host, 'compute-1');
      assert.equal(job.notificationUuid, null);
      assert.equal(job.failure.source, 'instance-monitor');
      assert.equal(jobId, instanceRestartJobId(domainUuid, job.observedAt));
      const stored = await queue.getJob(jobId);
      assert.deepEqual(stored?.data, job, 'the job is in the instance-restart queue');
      assert.equal(stored?.opts.attempts, 5);
    }
  });
});
