// The engines of a benchmark's cluster mode (BENCH_CLUSTER=1, `npm run bench -- <name> --cluster`):
// a 3-node RabbitMQ cluster (startRabbitmqCluster: its own node names, ports, Erlang cookie and data
// folders, quorum queues possible) and a Redis Cluster of 3 masters with one replica each
// (startPrivateRedisCluster), both on this machine and started by the benchmark itself. Their stop is
// registered with the BenchRun before they start, so the end, an error, SIGINT, SIGTERM and the time
// limit all stop them — only the processes they started (RabbitMQ nodes by their process group,
// redis-server by pid) — and remove their folders. The production topologies they stand for are
// described in docs/operations.md (section 5).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPrivateRedisCluster, startRabbitmqCluster } from '@lifeguard/testing';
import { Cluster } from 'ioredis';
import type { BenchRun } from './bench-run.ts';

/** The clusters a benchmark runs on in cluster mode, with the vhost `vhost` created on RabbitMQ. */
export interface ClusterEngines {
  /** `amqp://...` of every RabbitMQ node with the vhost, comma-separated (LIFEGUARD_AMQP_URL's list form). */
  readonly amqpUrls: string;
  /** The first node's URL with the vhost, for the benchmark's own clients (amqplib takes one URL). */
  readonly amqpUrl: string;
  /** `127.0.0.1:<port>,...` of every Redis Cluster node (LIFEGUARD_REDIS_CLUSTER_NODES). */
  readonly redisNodes: string;
  /** A new ioredis Cluster client on the Redis Cluster (the caller quits it). */
  redis(): Cluster;
  /** What the engines were: `3 RabbitMQ nodes (ports ...), Redis Cluster 3 masters + 3 replicas (ports ...)`. */
  readonly description: string;
}

/**
 * Starts both clusters (RabbitMQ first, then Redis; one after the other, the machine is small) and
 * creates `vhost` on RabbitMQ with every permission for guest.
 * @throws Error when a RabbitMQ node does not accept connections within 180 s, a join fails, or the
 *   Redis Cluster is not ok within 30 s (what has started is stopped by the registered clean-ups)
 */
export async function startClusterEngines(bench: BenchRun, vhost: string): Promise<ClusterEngines> {
  if (bench.stopping) throw new Error('the benchmark is ending');
  const directory = mkdtempSync(join(tmpdir(), 'lifeguard-bench-rabbitmq-cluster-'));
  bench.resource(`the RabbitMQ cluster's folder ${directory}`, () =>
    rmSync(directory, { recursive: true, force: true }),
  );
  bench.phase('starting a 3-node RabbitMQ cluster');
  const [rabbitmq] = await bench.acquire(
    'the RabbitMQ cluster (3 nodes)',
    () => startRabbitmqCluster(directory, 3),
    (cluster) => cluster.stop(),
  );
  // A signal during the start lets the start finish and stops the cluster: start nothing more then.
  if (bench.stopping) throw new Error('the benchmark is ending');
  await rabbitmq.addVhost(vhost);
  bench.phase('starting a Redis Cluster (3 masters, 3 replicas)');
  const [redis] = await bench.acquire(
    'the Redis Cluster (3 masters, 3 replicas)',
    () => startPrivateRedisCluster({ masters: 3, replicasPerMaster: 1 }),
    (cluster) => cluster.stop(),
  );
  const amqpUrls = rabbitmq.url(vhost);
  const nodes = redis.nodeList.split(',').map((node) => {
    const [host, port] = node.split(':');
    return { host: host!, port: Number(port) };
  });
  return {
    amqpUrls,
    amqpUrl: amqpUrls.split(',')[0]!,
    redisNodes: redis.nodeList,
    redis: () => new Cluster(nodes),
    description:
      `RabbitMQ cluster of 3 nodes (AMQP ports ${rabbitmq.nodes.map((node) => node.port).join(', ')}), ` +
      `Redis Cluster of 3 masters + 3 replicas (ports ${redis.nodes.map((node) => node.port).join(', ')})`,
  };
}
