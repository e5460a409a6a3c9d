import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis } from '@lifeguard/testing';
import type { Redis } from 'ioredis';
import {
  blankMemoryReason,
  DeploymentGeneration,
  type GenerationMarker,
  generationMarkerKey,
  judgeGeneration,
} from '../src/index.ts';

const marker = (id: string, rebuild: GenerationMarker['rebuild'] = 'none'): GenerationMarker => ({
  id,
  createdAt: '2026-07-28T10:00:00.000Z',
  rebuild,
  lostGenerationId: rebuild === 'none' ? null : 'generation-before',
});

describe('judgeGeneration: what a process concludes from the marker and the generation it saw', () => {
  it('no marker and none seen is a first start', () => {
    assert.deepEqual(judgeGeneration(null, null), { kind: 'first-start' });
  });
  it('a marker this process had not seen is adopted', () => {
    assert.deepEqual(judgeGeneration(marker('g1'), null), { kind: 'adopted' });
  });
  it('the marker it saw is the same generation', () => {
    assert.deepEqual(judgeGeneration(marker('g1'), 'g1'), { kind: 'same' });
  });
  it('a missing marker after one was seen is a lost memory', () => {
    assert.deepEqual(judgeGeneration(null, 'g1'), { kind: 'memory-lost', lostGenerationId: 'g1' });
  });
  it('another marker than the one seen is a lost memory (someone wrote a new one first)', () => {
    assert.deepEqual(judgeGeneration(marker('g2', 'pending'), 'g1'), {
      kind: 'memory-lost',
      lostGenerationId: 'g1',
    });
  });
});

describe('blankMemoryReason: whether a fence may run as far as Redis memory goes', () => {
  it('lets a fence run on a fresh deployment and on a healthy or rebuilt generation', () => {
    assert.equal(blankMemoryReason(null, null), null);
    assert.equal(blankMemoryReason(marker('g1'), 'g1'), null);
    assert.equal(blankMemoryReason(marker('g2', 'done'), 'g1'), null);
  });
  it('refuses while the marker this process saw is gone', () => {
    assert.match(blankMemoryReason(null, 'g1') ?? '', /generation g1 was seen: its memory was lost/);
  });
  it('refuses while the rebuild from Nova is pending', () => {
    assert.match(
      blankMemoryReason(marker('g2', 'pending'), 'g1') ?? '',
      /rebuild from Nova has not finished/,
    );
    assert.match(blankMemoryReason(marker('g2', 'pending'), null) ?? '', /has not finished/);
  });
});

describe('DeploymentGeneration on Redis', () => {
  let redis: Redis;
  const keyPrefix = randomKeyPrefix('generation');

  before(() => {
    redis = testRedis();
  });
  after(async () => {
    await deleteKeysWithPrefix(redis, keyPrefix);
    await redis.quit();
  });

  it('writes the marker on a first start, notices it missing, writes a pending one, and marks it rebuilt', async () => {
    const monitor = new DeploymentGeneration(redis, keyPrefix);
    const first = await monitor.observe();
    assert.equal(first.verdict.kind, 'first-start');
    assert.equal(first.marker.rebuild, 'none');
    assert.equal((await monitor.observe()).verdict.kind, 'same');

    const worker = new DeploymentGeneration(redis, keyPrefix);
    worker.remember((await worker.read())!);
    await redis.del(generationMarkerKey(keyPrefix));
    assert.notEqual(blankMemoryReason(await worker.read(), worker.remembered), null);

    const lost = await monitor.observe();
    assert.deepEqual(lost.verdict, { kind: 'memory-lost', lostGenerationId: first.marker.id });
    assert.equal(lost.marker.rebuild, 'pending');
    assert.equal(lost.marker.lostGenerationId, first.marker.id);
    assert.notEqual(blankMemoryReason(await worker.read(), worker.remembered), null);

    assert.equal(await monitor.markRebuilt(lost.marker), true);
    assert.equal(blankMemoryReason(await worker.read(), worker.remembered), null);
    assert.equal((await monitor.observe()).verdict.kind, 'same');
  });

  it('does not mark a marker rebuilt once another generation replaced it', async () => {
    const monitor = new DeploymentGeneration(redis, `${keyPrefix}-b`);
    const { marker: written } = await monitor.observe();
    await redis.set(generationMarkerKey(`${keyPrefix}-b`), JSON.stringify(marker('other', 'pending')));
    assert.equal(await monitor.markRebuilt(written), false);
    assert.equal((await monitor.read())?.id, 'other');
    await redis.del(generationMarkerKey(`${keyPrefix}-b`));
  });
});
