import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis, waitFor } from '@lifeguard/testing';
import { ACTION_CLAIM_RECORD_SECONDS, ActionClaims, type ClaimAnswer } from '../src/index.ts';

describe('ActionClaims on the real Redis', () => {
  const redis = testRedis();
  const prefix = randomKeyPrefix('claims');
  const claims = new ActionClaims(redis);
  after(async () => {
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });
  const a = { token: 'worker-a-id:1', name: 'worker-a' };
  const b = { token: 'worker-b-id:4', name: 'worker-b' };

  it('of twenty runs taking one claim at once, exactly one takes it and the others see it held', async () => {
    const key = `${prefix}:race`;
    const runs = Array.from({ length: 20 }, (_, index) => ({
      token: `run:${index}`,
      name: `worker-${index}`,
    }));
    const answers = await Promise.all(runs.map((run) => claims.take(key, run, 60_000)));
    const taken = answers.filter((answer) => answer.kind === 'taken');
    assert.equal(taken.length, 1);
    assert.deepEqual(taken[0], { kind: 'taken', generation: 1, previous: null });
    const winner = runs[answers.indexOf(taken[0]!)]!;
    for (const answer of answers.filter((each) => each.kind === 'held')) {
      assert.deepEqual((answer as Extract<ClaimAnswer, { kind: 'held' }>).holder, winner);
    }
    assert.equal(answers.filter((answer) => answer.kind === 'held').length, 19);
  });

  it('is its holder’s again on every take (extended), held for another until it runs out, then taken with the next generation', async () => {
    const key = `${prefix}:lifetime`;
    assert.deepEqual(await claims.take(key, a, 800), { kind: 'taken', generation: 1, previous: null });
    assert.deepEqual(await claims.take(key, a, 800), { kind: 'mine', generation: 1 });
    const held = await claims.take(key, b, 800);
    assert.equal(held.kind, 'held');
    assert.deepEqual((held as Extract<ClaimAnswer, { kind: 'held' }>).holder, a);
    const left = (held as Extract<ClaimAnswer, { kind: 'held' }>).expiresInMilliseconds;
    assert.ok(left > 0 && left <= 800, `${left} ms left`);
    const next = await waitFor('the claim to run out', async () => {
      const answer = await claims.take(key, b, 60_000);
      return answer.kind === 'taken' ? answer : false;
    });
    assert.deepEqual(next, { kind: 'taken', generation: 2, previous: a });
    assert.equal((await claims.take(key, a, 800)).kind, 'held', 'the first holder lost it');
    const ttl = await redis.ttl(key);
    assert.ok(ttl > ACTION_CLAIM_RECORD_SECONDS - 60 && ttl <= ACTION_CLAIM_RECORD_SECONDS, `kept ${ttl} s`);
  });

  it('stays its holder’s after its lifetime when nobody took it meanwhile', async () => {
    const key = `${prefix}:late-holder`;
    await claims.take(key, a, 50);
    await waitFor('the lifetime to run out', async () => {
      const fields = await redis.hmget(key, 'expires');
      const [seconds, microseconds] = await redis.time();
      return Number(fields[0]) < Number(seconds) * 1000 + Math.floor(Number(microseconds) / 1000);
    });
    assert.deepEqual(await claims.take(key, a, 50), { kind: 'mine', generation: 1 });
  });

  it('is released only by its holder, keeping its generation, so the next taker knows someone held it', async () => {
    const key = `${prefix}:release`;
    await claims.take(key, a, 60_000);
    assert.equal(await claims.release(key, b.token), false);
    assert.equal((await claims.take(key, b, 60_000)).kind, 'held');
    assert.equal(await claims.release(key, a.token), true);
    assert.deepEqual(await claims.take(key, b, 60_000), { kind: 'taken', generation: 2, previous: null });
    assert.equal(await claims.release(key, a.token), false, 'released once');
  });
});
