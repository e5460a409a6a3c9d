import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { deleteKeysWithPrefix, randomKeyPrefix, sleep, testRedis, waitFor } from '@lifeguard/testing';
import { createLogger, FencingTokenGuard, LeaderLease } from '../src/index.ts';

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
    const guard = new FencingTokenGuard(redis, `${prefix}:fencing-worker:highest-token`);
    assert.equal(await guard.accept(5), true);
    assert.equal(await guard.accept(5), true, 'the same leader again');
    assert.equal(await guard.accept(7), true);
    assert.equal(await guard.accept(6), false, 'a stale leader');
    assert.equal(await guard.highest(), 7);
  });
});
