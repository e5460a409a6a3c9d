import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { deleteKeysWithPrefix, randomKeyPrefix, sleep, testRedis, waitFor } from '@lifeguard/testing';
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

  it('FencingTokenGuard rejects a token older than the newest seen', async () => {
    const issued = `${prefix}:node-monitor:leader:token`;
    await redis.set(issued, '7');
    const guard = new FencingTokenGuard(redis, `${prefix}:fencing-worker:highest-token`, issued);
    assert.equal(await guard.accept(5), true);
    assert.equal(await guard.accept(5), true, 'the same leader again');
    assert.equal(await guard.accept(7), true);
    assert.equal(await guard.accept(6), false, 'a stale leader');
    assert.equal(await guard.highest(), 7);
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
