// lifeguard's Redis connection on a real Redis Cluster started by the test (3 masters, 3 replicas on
// loopback ports): the Cluster client, a Lua script over several prefixed keys, MULTI, SCAN over
// every master, and BullMQ's queue and worker, whose keys all hash to the prefix's slot.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { type PrivateRedisCluster, startPrivateRedisCluster, waitFor } from '@lifeguard/testing';
import { Queue, Worker } from 'bullmq';
import {
  bullmqPrefix,
  connectRedis,
  createLogger,
  defineRedisScripts,
  isRedisCluster,
  parseRedisNodes,
  type RedisClient,
  type RedisSettings,
  redisKey,
  runScript,
  scanKeys,
} from '../src/index.ts';

const logger = createLogger({ service: 'runtime-test', level: 'silent' });

describe('Redis Cluster', { timeout: 120_000 }, () => {
  let cluster: PrivateRedisCluster;
  let settings: RedisSettings;
  let redis: RedisClient;

  before(async () => {
    cluster = await startPrivateRedisCluster({ masters: 3, replicasPerMaster: 1 });
    settings = {
      url: 'redis://127.0.0.1:6379/0',
      clusterNodes: parseRedisNodes(cluster.nodeList),
      keyPrefix: `{t-cluster-${randomUUID().slice(0, 8)}}`,
    };
    redis = await connectRedis(settings, 'default', 'runtime-test:cluster', logger);
  });

  after(async () => {
    redis?.disconnect();
    await cluster?.stop();
  });

  it('connects with the Cluster client and knows every master', () => {
    assert.ok(isRedisCluster(redis));
    assert.equal(redis.nodes('master').length, 3);
  });

  it('runs a Lua script and a MULTI over several keys of the prefix atomically (one slot)', async () => {
    const script = {
      command: 'lifeguardTestMove',
      lua: "local value = redis.call('GET', KEYS[1]); redis.call('DEL', KEYS[1]); redis.call('SET', KEYS[2], value); return value",
    };
    defineRedisScripts(redis, [script]);
    const from = redisKey(settings.keyPrefix, 'incident', 'a');
    const to = redisKey(settings.keyPrefix, 'fence-record', 'b');
    await redis.set(from, 'payload');
    assert.equal(await runScript(redis, script, [from, to], []), 'payload');
    assert.deepEqual(await redis.multi().get(from).get(to).exec(), [
      [null, null],
      [null, 'payload'],
    ]);
  });

  it('without the hash tag the same script is refused by the cluster (CROSSSLOT), which is why start-up requires it', async () => {
    const script = { command: 'lifeguardTestTouchTwo', lua: "return redis.call('MGET', KEYS[1], KEYS[2])" };
    defineRedisScripts(redis, [script]);
    await assert.rejects(
      runScript(redis, script, ['lifeguard:incident:a', 'lifeguard:fence-record:b'], []),
      /CROSSSLOT/,
    );
  });

  it('SCAN finds the prefix keys wherever the slot lives (every master is scanned)', async () => {
    const keys = Array.from({ length: 20 }, (_, index) =>
      redisKey(settings.keyPrefix, 'scan', String(index)),
    );
    for (const key of keys) await redis.set(key, '1');
    const found = await scanKeys(redis, `${settings.keyPrefix}:scan:*`);
    assert.deepEqual(found.sort(), [...keys].sort());
  });

  it("BullMQ's queue and worker run on the cluster under the tagged prefix, every key in the prefix's slot", async () => {
    const prefix = bullmqPrefix(settings.keyPrefix);
    const producer = await connectRedis(settings, 'producer', 'runtime-test:producer', logger);
    const workerConnection = await connectRedis(settings, 'worker', 'runtime-test:worker', logger);
    const queue = new Queue('cluster-test', { connection: producer, prefix });
    const done: string[] = [];
    const worker = new Worker(
      'cluster-test',
      async (job) => {
        done.push(String(job.data.host));
        return 'ok';
      },
      { connection: workerConnection, prefix, concurrency: 2 },
    );
    try {
      for (const host of ['compute-01', 'compute-02', 'compute-03'])
        await queue.add('fence', { host }, { jobId: `fence-${host}`, removeOnComplete: false });
      // A second add with the same deterministic id is the same job.
      await queue.add('fence', { host: 'compute-01' }, { jobId: 'fence-compute-01' });
      await waitFor('three jobs done', () => done.length >= 3, 30_000, 20);
      assert.deepEqual(done.sort(), ['compute-01', 'compute-02', 'compute-03']);
      assert.equal(await queue.getCompletedCount(), 3);
      const slot = async (key: string) => Number(await redis.cluster('KEYSLOT', key));
      const keys = await scanKeys(redis, `${prefix}:*`);
      assert.ok(keys.length > 5, `BullMQ wrote its keys (${keys.length})`);
      const slots = new Set(await Promise.all(keys.map(slot)));
      assert.deepEqual([...slots], [await slot(settings.keyPrefix)]);
    } finally {
      await worker.close();
      await queue.close();
      producer.disconnect();
      workerConnection.disconnect();
    }
  });
});
