// BullMQ workers on lifeguard's Redis Cluster connection keep taking jobs after the master of the
// prefix's slot is killed and its replica promoted. Six idle workers, started 0.8 s apart so their
// 5-second blocking waits are spread over the whole wait, are all blocked on the master when it dies;
// a job added to each queue after the failover must be processed by each.
// (Found in the Redis Cluster fault test: a worker's blocking connection, reset by BullMQ's watchdog
// while the cluster still said cluster_state:fail, never finished reconnecting, and the worker took
// no job again; docs/operations.md#53-redis.)
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { type PrivateRedisCluster, startPrivateRedisCluster, waitFor } from '@lifeguard/testing';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import {
  bullmqPrefix,
  connectRedis,
  createLogger,
  parseRedisNodes,
  type RedisClient,
  type RedisSettings,
} from '../src/index.ts';

const logger = createLogger({ service: 'runtime-test', level: 'silent' });
const WORKERS = 6;
const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** Resolves once the master on `port` has an online replica (one that a failover can promote). */
async function replicaOnline(port: number): Promise<void> {
  const master = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await waitFor(
      `a replica of 127.0.0.1:${port} online`,
      async () => /slave0:.*state=online/.test(await master.info('replication')),
      30_000,
      200,
    );
  } finally {
    master.disconnect();
  }
}

describe('Redis Cluster failover under BullMQ workers', { timeout: 180_000 }, () => {
  let cluster: PrivateRedisCluster;
  let settings: RedisSettings;
  const connections: RedisClient[] = [];
  const workers: Worker[] = [];
  const queues: Queue[] = [];

  before(async () => {
    cluster = await startPrivateRedisCluster({
      masters: 3,
      replicasPerMaster: 1,
      nodeTimeoutMilliseconds: 2000,
    });
    settings = {
      url: 'redis://127.0.0.1:6379/0',
      clusterNodes: parseRedisNodes(cluster.nodeList),
      keyPrefix: `{t-failover-${randomUUID().slice(0, 8)}}`,
    };
  });

  after(async () => {
    await Promise.race([Promise.all(workers.map((worker) => worker.close(true))), sleep(5000)]);
    await Promise.all(queues.map((queue) => queue.close()));
    for (const connection of connections) connection.disconnect();
    await cluster?.stop();
  });

  it("every worker takes a new job after the master of the prefix's slot is killed and its replica promoted", async () => {
    const prefix = bullmqPrefix(settings.keyPrefix);
    const processed = new Map<string, number>();
    const producer = await connectRedis(settings, 'producer', 'runtime-test:producer', logger);
    connections.push(producer);
    for (let index = 0; index < WORKERS; index++) {
      const name = `failover-${index}`;
      const connection = await connectRedis(settings, 'worker', `runtime-test:${name}`, logger);
      connections.push(connection);
      queues.push(new Queue(name, { connection: producer, prefix }));
      const worker = new Worker(
        name,
        async (job) => {
          processed.set(`${name}/${job.id}`, Date.now());
        },
        { connection, prefix, concurrency: 2 },
      );
      worker.on('error', () => {});
      workers.push(worker);
      await worker.waitUntilReady();
      await sleep(800);
    }
    const master = await cluster.masterOf(settings.keyPrefix);
    await replicaOnline(master);
    await cluster.killNode(master);
    const promoted = await cluster.waitUntilServing(settings.keyPrefix, 60_000);
    assert.notEqual(promoted, master, 'a replica was promoted');
    for (const queue of queues) {
      await waitFor(
        `job added to ${queue.name}`,
        async () => {
          try {
            await queue.add('after-failover', {}, { jobId: 'after-failover', priority: 500 });
            return true;
          } catch {
            return false;
          }
        },
        30_000,
        500,
      );
    }
    const stuck = () => queues.filter((queue) => !processed.has(`${queue.name}/after-failover`));
    await waitFor('every worker took its job', () => stuck().length === 0, 60_000, 200).catch(() => {
      assert.fail(
        `${stuck().length} of ${WORKERS} workers took no job after the failover: ${stuck()
          .map((queue) => queue.name)
          .join(', ')}`,
      );
    });
  });
});
