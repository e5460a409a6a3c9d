import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { after, before, describe, it } from 'node:test';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  REDIS_URL,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import { pino } from 'pino';
import { LeaderLease, RUNTIME_VERSION, startService, WorkerRegistry } from '../src/index.ts';

describe('worker registry', () => {
  let vhost: TestVhost;
  const prefix = randomKeyPrefix('workers');
  const redis = testRedis();
  before(async () => {
    vhost = await createTestVhost('workers');
  });
  after(async () => {
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
    await vhost.delete();
  });

  it('startService registers the process once started and removes it on shutdown', async () => {
    const context = await startService({
      service: 'registry-test',
      defaultHttpPort: 0,
      env: {
        LIFEGUARD_AMQP_URL: vhost.url,
        LIFEGUARD_REDIS_URL: REDIS_URL,
        LIFEGUARD_REDIS_KEY_PREFIX: prefix,
        LIFEGUARD_HTTP_PORT: '0',
        LIFEGUARD_LOG_LEVEL: 'silent',
        LIFEGUARD_INSTANCE_NAME: 'node-a:4242',
      },
    });
    (context.shutdown as unknown as { options: { exit: (code: number) => void } }).options.exit = () => {};
    const registry = new WorkerRegistry(redis, prefix);
    assert.deepEqual(await registry.list(), [], 'not registered before finishStartup');
    context.finishStartup();
    try {
      const [worker] = await waitFor('the registered worker', async () => {
        const listed = await registry.list();
        return listed.length === 1 ? listed : undefined;
      });
      assert.equal(worker?.service, 'registry-test');
      assert.equal(worker?.instance, 'node-a:4242');
      assert.equal(worker?.pid, process.pid);
      assert.equal(worker?.host, hostname());
      assert.equal(worker?.httpHost, '127.0.0.1');
      assert.equal(worker?.httpPort, context.admin.port);
      assert.equal(worker?.version, RUNTIME_VERSION);
      assert.match(RUNTIME_VERSION, /^\d+\.\d+\.\d+/);
      assert.ok(worker!.expiresInMilliseconds > 10_000 && worker!.expiresInMilliseconds <= 15_000);
      assert.ok(
        await redis.exists(WorkerRegistry.workerKey(prefix, 'registry-test', 'node-a:4242')),
        'the record lives at <prefix>:workers:<service>:<instance>',
      );
    } finally {
      await context.shutdown.shutdown('test');
    }
    assert.deepEqual(await new WorkerRegistry(redis, prefix).list(), []);
  });

  it('refreshes the record while running, and a process that stops refreshing expires', async () => {
    const otherPrefix = `${prefix}-expiry`;
    const registry = new WorkerRegistry(redis, otherPrefix, { ttlSeconds: 2, refreshSeconds: 0.3 });
    const identity = {
      service: 'expiry-test',
      instance: 'node-b:1',
      pid: 1,
      host: 'node-b',
      httpHost: '127.0.0.1',
      httpPort: 9999,
      version: '9.9.9',
    };
    await registry.start(identity);
    try {
      const first = (await registry.list())[0]!;
      const refreshed = await waitFor('a refresh', async () => {
        const now = (await registry.list())[0];
        return now && now.refreshedAt > first.refreshedAt ? now : undefined;
      });
      assert.equal(refreshed.startedAt, first.startedAt, 'startedAt is kept across refreshes');
      // A crashed process: its record stays until the TTL runs out, then it is gone.
      const dead = new WorkerRegistry(redis, otherPrefix, { ttlSeconds: 1, refreshSeconds: 0.5 });
      await dead.start({ ...identity, instance: 'node-c:2' });
      (dead as unknown as { timer: NodeJS.Timeout }).timer.close();
      assert.deepEqual(
        (await registry.list()).map((worker) => worker.instance),
        ['node-b:1', 'node-c:2'],
      );
      await waitFor('the crashed process to expire', async () => (await registry.list()).length === 1, 5000);
    } finally {
      await registry.stop();
      await deleteKeysWithPrefix(redis, otherPrefix);
    }
    assert.deepEqual(await registry.list(), []);
  });

  it('leaves out records that do not satisfy the heartbeat contract', async () => {
    const otherPrefix = `${prefix}-damaged`;
    await redis.set(`${otherPrefix}:workers:x:y`, '{"service":"x"}', 'EX', 30);
    await redis.set(`${otherPrefix}:workers:x:z`, 'not json', 'EX', 30);
    try {
      assert.deepEqual(await new WorkerRegistry(redis, otherPrefix).list(), []);
    } finally {
      await deleteKeysWithPrefix(redis, otherPrefix);
    }
  });

  it('refuses a refresh period that is not below the time to live', () => {
    assert.throws(
      () => new WorkerRegistry(redis, prefix, { ttlSeconds: 5, refreshSeconds: 5 }),
      /refreshSeconds \(5\) must be positive and below ttlSeconds \(5\)/,
    );
  });
});

describe('LeaderLease.read', () => {
  const redis = testRedis();
  const prefix = randomKeyPrefix('lease-read');
  after(async () => {
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  it('reports the holder, the fencing token and the time left, and null when nobody holds it', async () => {
    const key = `${prefix}:leader`;
    assert.equal(await LeaderLease.read(redis, key), null);
    const lease = new LeaderLease(redis, {
      key,
      holder: 'monitor-1:77',
      ttlMilliseconds: 10_000,
      logger: pino({ level: 'silent' }),
    });
    const token = await lease.tryAcquire();
    const read = await LeaderLease.read(redis, key);
    assert.equal(read?.holder, 'monitor-1:77');
    assert.equal(read?.token, token);
    assert.ok(read!.expiresInMilliseconds > 5000 && read!.expiresInMilliseconds <= 10_000);
    await lease.stop();
    assert.equal(await LeaderLease.read(redis, key), null);
  });
});
