import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  deleteKeysWithPrefix,
  REDIS_URL,
  randomKeyPrefix,
  sleep,
  startTcpProxy,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import { Redis } from 'ioredis';
import {
  createLogger,
  FencingTokenGuard,
  LeaderLease,
  nodeMonitorLeaderKey,
  RejectedMessageError,
} from '../src/index.ts';

const logger = createLogger({ service: 'runtime-test', level: 'silent' });

describe('LeaderLease on the real Redis', () => {
  const redis = testRedis();
  const prefix = randomKeyPrefix('lease');
  after(async () => {
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  it('of two contenders exactly one takes the lease; it lapses on expiry and the token increases', async () => {
    const key = `${prefix}:monitor:leader`;
    const first = new LeaderLease(redis, { key, holder: 'monitor-a', ttlMilliseconds: 400, logger });
    const second = new LeaderLease(redis, { key, holder: 'monitor-b', ttlMilliseconds: 400, logger });
    const [tokenA, tokenB] = await Promise.all([first.tryAcquire(), second.tryAcquire()]);
    assert.equal([tokenA, tokenB].filter((token) => token !== null).length, 1, 'exactly one leader');
    const [leader, standby] = tokenA !== null ? [first, second] : [second, first];
    const firstToken = (tokenA ?? tokenB)!;
    assert.equal(leader.isLeader, true);
    assert.equal(standby.isLeader, false);

    // renewing keeps the same token
    assert.equal(await leader.tryAcquire(), firstToken);
    // the leader stops renewing: after the TTL it no longer considers itself leader, and the standby takes over
    await sleep(450);
    assert.equal(leader.isLeader, false, 'a lease not renewed within its TTL is no longer held');
    const takeover = await standby.tryAcquire();
    assert.ok(takeover !== null && takeover > firstToken, `token increased: ${firstToken} -> ${takeover}`);
    // the old leader cannot take it back while the new one holds it
    assert.equal(await leader.tryAcquire(), null);
  });

  it('a running standby takes over within the TTL when the leader stops renewing', async () => {
    const key = `${prefix}:takeover:leader`;
    const leader = new LeaderLease(redis, { key, holder: 'a', ttlMilliseconds: 600, logger });
    const standby = new LeaderLease(redis, {
      key,
      holder: 'b',
      ttlMilliseconds: 600,
      renewEveryMilliseconds: 100,
      logger,
    });
    const acquired: number[] = [];
    standby.on('acquired', (token: number) => acquired.push(token));
    // the leader takes the lease once and then dies (never renews, never releases)
    const leaderToken = await leader.tryAcquire();
    assert.ok(leaderToken !== null);
    const died = Date.now();
    standby.start();
    await waitFor('the standby to lead', () => standby.isLeader, 3000, 20);
    const takeoverMilliseconds = Date.now() - died;
    assert.ok(takeoverMilliseconds <= 600 + 150, `took over after ${takeoverMilliseconds} ms`);
    assert.deepEqual(acquired, [leaderToken + 1]);
    await standby.stop();
  });

  it('a released lease is taken by a running standby at once', async () => {
    const key = `${prefix}:release:leader`;
    const leader = new LeaderLease(redis, {
      key,
      holder: 'a',
      ttlMilliseconds: 5000,
      renewEveryMilliseconds: 100,
      logger,
    });
    const standby = new LeaderLease(redis, {
      key,
      holder: 'b',
      ttlMilliseconds: 5000,
      renewEveryMilliseconds: 100,
      logger,
    });
    leader.start();
    await waitFor('the first leader', () => leader.isLeader);
    standby.start();
    await sleep(300);
    assert.equal(standby.isLeader, false);
    await leader.stop();
    await waitFor('the standby to lead', () => standby.isLeader, 1000);
    await standby.stop();
  });

  it('FencingTokenGuard accepts the newest issued token, again and again, and refuses an older one', async () => {
    const issued = `${prefix}:node-monitor:leader:token`;
    await redis.set(issued, '5');
    const guard = new FencingTokenGuard(redis, `${prefix}:fencing-worker:highest-token`, issued);
    assert.equal(await guard.accept(5), true);
    assert.equal(await guard.accept(5), true, 'the same leader again');
    await redis.set(issued, '7');
    assert.equal(await guard.accept(7), true);
    assert.equal(await guard.accept(6), false, 'a stale leader');
    assert.equal(await guard.highest(), 7);
  });

  it("FencingTokenGuard drops a deposed leader's late message although the new leader's first message has not arrived yet", async () => {
    const key = nodeMonitorLeaderKey(`${prefix}:late`);
    const deposed = new LeaderLease(redis, { key, holder: 'monitor#a', ttlMilliseconds: 5000, logger });
    const successor = new LeaderLease(redis, { key, holder: 'monitor#b', ttlMilliseconds: 5000, logger });
    const oldToken = await deposed.tryAcquire();
    await redis.del(key); // the deposed leader's lease lapsed (its link to Redis cut)
    const newToken = await successor.tryAcquire();
    assert.deepEqual([oldToken, newToken], [1, 2]);
    const guard = FencingTokenGuard.forNodeMonitorLeader(redis, `${prefix}:late`, `${prefix}:late:seen`);
    assert.equal(await guard.accept(1), false, 'token 1 arrives first, after token 2 was issued');
    assert.equal(await guard.highest(), null, 'the stale token is not recorded');
    assert.equal(await guard.accept(2), true);
    await successor.stop();
  });

  it('a leader whose link to Redis is slower than the lease gives the lease up, so a standby with a working link takes over', async () => {
    const key = nodeMonitorLeaderKey(`${prefix}:slow`);
    const proxy = await startTcpProxy({ targetPort: Number(new URL(REDIS_URL).port || 6379) });
    const slowRedis = new Redis({ host: '127.0.0.1', port: proxy.port });
    const slow = new LeaderLease(slowRedis, {
      key,
      holder: 'monitor#slow',
      ttlMilliseconds: 600,
      renewEveryMilliseconds: 100,
      logger,
    });
    const standby = new LeaderLease(redis, {
      key,
      holder: 'monitor#standby',
      ttlMilliseconds: 600,
      renewEveryMilliseconds: 100,
      logger,
    });
    try {
      slow.start();
      await waitFor('the leader on the slow link to lead', () => slow.isLeader, 5000);
      standby.start();
      // Each direction 400 ms: a renewal is answered 800 ms after it was sent, past the 600 ms lease.
      proxy.setDelay(400);
      await waitFor('the standby to lead', () => standby.isLeader, 20_000);
      assert.equal(slow.isLeader, false, 'never two leaders');
      const holder = await LeaderLease.read(redis, key);
      assert.equal(holder?.holder, 'monitor#standby');
    } finally {
      await standby.stop();
      await slow.stop();
      slowRedis.disconnect();
      await proxy.stop();
    }
  });

  it('FencingTokenGuard refuses a token the lease never issued, without recording it (a forged 99 must not make the real leader stale)', async () => {
    const lease = new LeaderLease(redis, {
      key: nodeMonitorLeaderKey(`${prefix}:forged`),
      holder: 'monitor#1',
      ttlMilliseconds: 5000,
      logger,
    });
    const token = await lease.tryAcquire();
    assert.equal(token, 1);
    const guard = FencingTokenGuard.forNodeMonitorLeader(redis, `${prefix}:forged`, `${prefix}:forged:seen`);
    await assert.rejects(
      guard.accept(99),
      (error: Error) =>
        error instanceof RejectedMessageError &&
        error.message === 'fencing token 99 was never issued by the leader lease (highest issued: 1)',
    );
    assert.equal(await guard.highest(), null, 'nothing recorded');
    assert.equal(await guard.accept(1), true, "the real leader's token is still current");
    await lease.stop();
    const unleased = FencingTokenGuard.forNodeMonitorLeader(redis, `${prefix}:none`, `${prefix}:none:seen`);
    await assert.rejects(unleased.accept(1), /never issued by the leader lease \(highest issued: none\)/);
  });
});
