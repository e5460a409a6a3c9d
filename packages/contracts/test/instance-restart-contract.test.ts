import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  InstanceRestartJob,
  InstanceRestartOutcome,
  instanceRestartJobId,
  JOB_QUEUES,
} from '../src/index.ts';

const job = {
  instanceId: '9a8e6f2c-4b1d-4c3e-8f7a-0d1e2f3a4b5c',
  host: 'compute-1',
  failure: { source: 'masakari-notification', event: 'LIFECYCLE', virDomainEvent: 'STOPPED_FAILED' },
  notificationUuid: '0d4e3c2b-1a09-4f8e-9d7c-6b5a4f3e2d1c',
  observedAt: '2026-12-07T02:10:00.000Z',
};

describe('instance-restart job contract', () => {
  it('accepts a Masakari notification failure and one from the instance monitor', () => {
    assert.deepEqual(InstanceRestartJob.parse(job), job);
    const fromMonitor = {
      ...job,
      failure: { source: 'instance-monitor', event: 'IO_ERROR', virDomainEvent: null },
      notificationUuid: null,
    };
    assert.deepEqual(InstanceRestartJob.parse(fromMonitor), fromMonitor);
  });

  it('rejects an unknown source and a timestamp without a zone, naming the field', () => {
    const badSource = InstanceRestartJob.safeParse({ ...job, failure: { ...job.failure, source: 'x' } });
    assert.equal(badSource.success, false);
    assert.deepEqual(badSource.error?.issues[0]?.path, ['failure', 'source']);
    const badTime = InstanceRestartJob.safeParse({ ...job, observedAt: '2026-12-07 02:10' });
    assert.deepEqual(badTime.error?.issues[0]?.path, ['observedAt']);
  });

  it('has one outcome vocabulary', () => {
    assert.equal(InstanceRestartOutcome.safeParse({ outcome: 'restarted', reason: 'ok' }).success, true);
    assert.equal(InstanceRestartOutcome.safeParse({ outcome: 'done', reason: 'ok' }).success, false);
  });

  it('gives one job id per failure, safe for BullMQ', () => {
    assert.equal(JOB_QUEUES.instanceRestart, 'instance-restart');
    assert.equal(
      instanceRestartJobId(job.instanceId, job.notificationUuid),
      `instance-restart.${job.instanceId}.${job.notificationUuid}`,
    );
    const byTime = instanceRestartJobId(job.instanceId, job.observedAt);
    assert.equal(byTime, `instance-restart.${job.instanceId}.2026-12-07T02_10_00.000Z`);
    assert.ok(!byTime.includes(':'));
    assert.equal(byTime, instanceRestartJobId(job.instanceId, job.observedAt));
  });
});
