// The node monitor as operators run it, with CHECK_HEARTBEAT, hearing real host agents
// (`lifeguard-host-agent` processes): the network an agent stops sending on shows on its /metrics.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  closedPort,
  createTestVhost,
  deleteKeysWithPrefix,
  lifeguardEntryPoint,
  REDIS_URL,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
  waitFor,
  withoutNodeOptions,
} from '@lifeguard/testing';
import { startMonitorProcess, writeInstanceHaConfig } from './support/monitor-process.ts';

const directory = mkdtempSync(join(tmpdir(), 'monitor-host-agent-'));
const keyPath = join(directory, 'hmac-key');
writeFileSync(keyPath, 'c3'.repeat(32));

/** A host agent process for compute-5 sending to the monitor on the given networks. */
function startAgent(heartbeatPort: number, networks: ReadonlyArray<string>): ChildProcess {
  const env: NodeJS.ProcessEnv = {
    ...withoutNodeOptions(process.env),
    HOST_AGENT_HOST: 'compute-5',
    HEARTBEAT_HMAC_KEY_PATH: keyPath,
    LIFEGUARD_HTTP_PORT: '0',
  };
  for (const network of networks)
    env[`HEARTBEAT_NETWORK_${network.toUpperCase()}`] = `127.0.0.1:${heartbeatPort}`;
  return spawn(process.execPath, lifeguardEntryPoint('host-agent'), { env, stdio: 'ignore' });
}

describe('node-monitor process with host agents', () => {
  let vhost: TestVhost;
  const prefix = randomKeyPrefix('monitor-agents');
  const redis = testRedis();
  before(async () => {
    vhost = await createTestVhost('monitor-agents');
  });
  after(async () => {
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
    await vhost.delete();
  });

  it('the leader names on /metrics the network a live host stopped sending on, and clears it when the host sends there again', async () => {
    const heartbeatPort = await closedPort();
    const monitor = startMonitorProcess('host-agents', {
      OS_AUTH_TYPE: 'admin_token',
      OS_TOKEN: 'admin:admin',
      OS_ENDPOINT: 'http://127.0.0.1:9/v2.1',
      INSTANCEHA_CONFIG_PATH: writeInstanceHaConfig({ CHECK_HEARTBEAT: true, HEARTBEAT_DOWN_AFTER: 2 }),
      HEARTBEAT_PORT: String(heartbeatPort),
      HEARTBEAT_HMAC_KEY_PATH: keyPath,
      LIFEGUARD_HEARTBEAT_LISTEN_ADDRESS: '127.0.0.1',
      LIFEGUARD_AMQP_URL: vhost.url,
      LIFEGUARD_REDIS_URL: REDIS_URL,
      LIFEGUARD_REDIS_KEY_PREFIX: prefix,
      LIFEGUARD_NODE_MONITOR_LEASE_TTL_SECONDS: '2',
    });
    const agents: ChildProcess[] = [];
    try {
      await monitor.waitForLog(/this node monitor now leads/);
      const port = await monitor.adminPort();
      const silentLine = async () =>
        (await (await fetch(`http://127.0.0.1:${port}/metrics`)).text())
          .split('\n')
          .find((line) => line.startsWith('lifeguard_host_agent_network_silent{')) ?? null;
      agents.push(startAgent(heartbeatPort, ['management', 'storage']));
      await waitFor(
        'both networks recorded',
        async () => (await redis.smembers(`${prefix}:node-monitor:host-agent:networks`)).length === 2,
      );
      assert.equal(await silentLine(), null, 'nothing silent while both networks are heard');
      const accepted = (await (await fetch(`http://127.0.0.1:${port}/metrics`)).text())
        .split('\n')
        .find((line) => line.startsWith('lifeguard_heartbeat_accepted_total{'));
      assert.match(accepted ?? '', /host="compute-5".* [1-9]\d*$/, 'the accepted heartbeats are counted');
      agents[0]!.kill('SIGKILL');
      agents.push(startAgent(heartbeatPort, ['management']));
      const line = await waitFor(
        'storage named silent',
        async () => (await silentLine()) ?? undefined,
        30_000,
      );
      assert.match(line, /host="compute-5"/);
      assert.match(line, /network="storage"/);
      assert.match(line, / 1$/);
      await monitor.waitForLog(/host agent of compute-5 silent on network storage \(heard on management\)/);
      agents.at(-1)!.kill('SIGKILL');
      agents.push(startAgent(heartbeatPort, ['management', 'storage']));
      await waitFor('storage heard again', async () => (await silentLine()) === null, 30_000);
      await monitor.waitForLog(/network storage of compute-5 heard again/);
    } finally {
      for (const agent of agents) agent.kill('SIGKILL');
      monitor.kill('SIGTERM');
      assert.equal(await monitor.exited, 0);
    }
  });
});
