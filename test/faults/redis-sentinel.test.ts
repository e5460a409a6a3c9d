// Redis Sentinel: the master is killed (SIGKILL) in the middle of an incident. The test starts its
// own master, one replica and three Sentinels (quorum 2, down-after 1 s) on loopback ports, runs
// lifeguard through the Sentinels, kills a compute host, and kills the master once host.down is out;
// the Sentinels promote the replica, the workers follow it, and the incident must still end with one
// fence, one evacuation per server and every event published.
import { after, before, describe, it } from 'node:test';
import { type PrivateSentinelSet, randomKeyPrefix, startPrivateSentinelSet } from '@lifeguard/testing';
import { incidentAcrossFailover, reportFailover } from './support/failover-incident.ts';

describe('Redis Sentinel failover', { timeout: 900_000 }, () => {
  let sentinels: PrivateSentinelSet;

  before(async () => {
    sentinels = await startPrivateSentinelSet({ sentinels: 3, replicas: 1, downAfterMilliseconds: 1000 });
  });

  after(async () => {
    await sentinels?.stop();
  });

  it('the master killed mid incident: the Sentinels promote the replica, one fence, one evacuation per server, no event lost', async (t) => {
    const result = await incidentAcrossFailover({
      label: 'fault-sentinel',
      keyPrefix: randomKeyPrefix('fault-sentinel'),
      redisUrl: sentinels.url,
      redisTopology: { sentinels: sentinels.sentinelList, sentinelName: sentinels.masterName },
      strike: async () => {
        const master = await sentinels.masterPort();
        const killedAt = Date.now();
        await sentinels.killNode(master);
        const promoted = await sentinels.waitForNewMaster(master, 60_000);
        return {
          killedAt,
          servingAgainAt: Date.now(),
          description: `master ${master} killed, replica ${promoted} promoted`,
        };
      },
    });
    reportFailover(
      (message) => t.diagnostic(message),
      'Redis Sentinel: master killed (SIGKILL) mid incident',
      result,
    );
  });
});
