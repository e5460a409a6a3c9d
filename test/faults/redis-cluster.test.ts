// Redis Cluster: the master holding lifeguard's slot is killed (SIGKILL) in the middle of an
// incident. The test starts its own cluster (3 masters, 3 replicas, cluster-node-timeout 2 s) on
// loopback ports, runs lifeguard on it with a hash-tagged key prefix, kills a compute host, and kills
// the master serving the prefix's slot once host.down is out; its replica is promoted, and the
// incident must still end with one fence, one evacuation per server and every event published.
import { after, before, describe, it } from 'node:test';
import { type PrivateRedisCluster, randomKeyPrefix, startPrivateRedisCluster } from '@lifeguard/testing';
import { incidentAcrossFailover, reportFailover } from './support/failover-incident.ts';

describe('Redis Cluster failover', { timeout: 900_000 }, () => {
  let cluster: PrivateRedisCluster;

  before(async () => {
    cluster = await startPrivateRedisCluster({
      masters: 3,
      replicasPerMaster: 1,
      nodeTimeoutMilliseconds: 2000,
    });
  });

  after(async () => {
    await cluster?.stop();
  });

  it("the master holding lifeguard's slot killed mid incident: its replica takes over, one fence, one evacuation per server, no event lost", async (t) => {
    const keyPrefix = `{${randomKeyPrefix('fault-cluster')}}`;
    const result = await incidentAcrossFailover({
      label: 'fault-cluster',
      keyPrefix,
      // With cluster nodes the URL gives only the credentials and TLS (none here); database 0.
      redisUrl: 'redis://127.0.0.1:6379/0',
      redisTopology: { clusterNodes: cluster.nodeList },
      strike: async () => {
        const master = await cluster.masterOf(keyPrefix);
        const killedAt = Date.now();
        await cluster.killNode(master);
        const promoted = await cluster.waitUntilServing(keyPrefix, 60_000);
        return {
          killedAt,
          servingAgainAt: Date.now(),
          description: `master ${master} killed, replica ${promoted} promoted`,
        };
      },
    });
    reportFailover(
      (message) => t.diagnostic(message),
      "Redis Cluster: master of lifeguard's slot killed (SIGKILL) mid incident",
      result,
    );
  });
});
