import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { LifeguardEventType } from '@lifeguard/contracts';
import { formatDisabledReason, IncidentStore } from '@lifeguard/instance-ha';
import { createLogger, DeploymentGeneration, generationMarkerKey } from '@lifeguard/runtime';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis } from '@lifeguard/testing';
import type { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { createNodeMonitorMetrics, NotLeaderError, RedisMemoryWatch } from '../src/index.ts';

const logger = createLogger({ service: 'node-monitor-test', level: 'silent' });
const now = new Date('2026-12-03T08:00:00Z');
const incidentId = 'compute-02.20261203T075436Z.6041';

/** compute-02 as Nova lists it once lifeguard fenced it and started evacuating it. */
const services = [
  {
    id: 'id-compute-02',
    binary: 'nova-compute',
    host: 'compute-02',
    zone: 'nova',
    status: 'disabled',
    state: 'down',
    forced_down: true,
    updated_at: new Date(now.getTime() - 2000).toISOString(),
    disabled_reason: formatDisabledReason({
      kind: 'evacuating',
      incidentId,
      at: new Date(now.getTime() - 3000),
    }),
  },
];

describe('RedisMemoryWatch: the rebuild after Redis lost its memory runs under the lease as Redis holds it now', () => {
  let redis: Redis;
  let prefix: string;
  let generation: DeploymentGeneration;
  let published: Array<{ type: LifeguardEventType; data: unknown }>;

  before(() => {
    redis = testRedis();
  });
  after(async () => {
    redis.disconnect();
  });
  afterEach(async () => {
    await deleteKeysWithPrefix(redis, prefix);
  });

  /** A watch whose generation was seen, then everything under the prefix deleted (a FLUSHDB). */
  async function watchAfterLoss(reaffirmLeadership: () => Promise<number | null>) {
    prefix = randomKeyPrefix('memory-watch');
    generation = new DeploymentGeneration(redis, prefix);
    await generation.observe(now);
    await deleteKeysWithPrefix(redis, prefix);
    published = [];
    const watch = new RedisMemoryWatch({
      generation,
      incidents: new IncidentStore(redis, prefix),
      events: {
        async publish(type, data) {
          published.push({ type, data });
        },
      },
      metrics: createNodeMonitorMetrics(new Registry()),
      logger,
      deltaSeconds: 4,
      reaffirmLeadership,
    });
    return watch;
  }

  it('takes the lease again and re-opens the incident under the token it holds now, not the one the cycle started with', async () => {
    let reaffirmed = 0;
    const watch = await watchAfterLoss(async () => {
      reaffirmed++;
      return 1;
    });
    const report = await watch.check(services, now, 7);
    assert.equal(reaffirmed, 1);
    assert.deepEqual(report?.restored, [{ host: 'compute-02', incidentId }]);
    const incident = await new IncidentStore(redis, prefix).get(incidentId);
    assert.equal(incident?.fencingToken, 1, 'the token the lease issued after the loss');
    assert.deepEqual(
      published.map((event) => event.type),
      ['redis.memory.lost'],
    );
  });

  it('rebuilds nothing when another replica holds the lease now: NotLeaderError, the rebuild left pending', async () => {
    const watch = await watchAfterLoss(async () => null);
    await assert.rejects(watch.check(services, now, 7), NotLeaderError);
    assert.equal(await new IncidentStore(redis, prefix).get(incidentId), null, 'no incident re-opened');
    assert.deepEqual(published, [], 'nothing published');
    const marker = JSON.parse((await redis.get(generationMarkerKey(prefix))) ?? 'null');
    assert.equal(marker?.rebuild, 'pending', 'the next leader rebuilds');
  });

  it('does not touch the lease while the memory is intact', async () => {
    let reaffirmed = 0;
    prefix = randomKeyPrefix('memory-watch');
    generation = new DeploymentGeneration(redis, prefix);
    await generation.observe(now);
    const watch = new RedisMemoryWatch({
      generation,
      incidents: new IncidentStore(redis, prefix),
      events: { publish: async () => undefined },
      metrics: createNodeMonitorMetrics(new Registry()),
      logger,
      deltaSeconds: 4,
      reaffirmLeadership: async () => {
        reaffirmed++;
        return 7;
      },
    });
    assert.equal(await watch.check(services, now, 7), null);
    assert.equal(reaffirmed, 0);
  });
});
