import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type CloudSim, startCloudSim } from '@lifeguard/cloud-sim';
import type { HostView, SystemStatus } from '@lifeguard/operator-views';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import { lifeguard, startWorkerProcess, type WorkerProcess } from './support/cli-harness.ts';

/**
 * The operator's story on the simulated cloud with the real workers as processes: `lifeguard status`
 * shows them and the leading node monitor, `lifeguard sim kill-host --watch` follows the recovery
 * (host.down, Redfish fencing, evacuation) to its end, and the host comes back by itself.
 */
describe('lifeguard with the real workers on cloud-sim', () => {
  let sim: CloudSim;
  let vhost: TestVhost;
  let env: NodeJS.ProcessEnv;
  const workers: WorkerProcess[] = [];
  const prefix = randomKeyPrefix('cli-recovery');
  const redis = testRedis();

  const startWorker = (name: string, workerPackage: string, extra: NodeJS.ProcessEnv) => {
    workers.push(startWorkerProcess(workerPackage, name, { ...env, ...extra }));
  };

  before(async () => {
    sim = await startCloudSim({
      hosts: 4,
      servers: 8,
      model: {
        reportIntervalSeconds: 0.5,
        serviceDownTimeSeconds: 2,
        evacuation: { acceptMilliseconds: 0, rebuildMilliseconds: 300 },
      },
    });
    vhost = await createTestVhost('cli-recovery');
    const entry = sim.cloudEntry('admin_token');
    const directory = mkdtempSync(join(tmpdir(), 'cli-recovery-'));
    const configPath = join(directory, 'config.yaml');
    writeFileSync(
      configPath,
      'config:\n  POLL: "1"\n  DELTA: "3"\n  THRESHOLD: "50"\n  TAGGED_AGGREGATES: "false"\n  SMART_EVACUATION: "true"\n  FENCING_TIMEOUT: "10"\n',
    );
    const fencing = [...sim.model.hosts.keys()].map((host) => {
      const bmc = sim.bmc(host);
      return `  ${host}: { agent: redfish, ipaddr: ${bmc.address}, ipport: ${bmc.port}, login: ${bmc.username}, passwd: "${bmc.password}", uuid: ${sim.model.host(host).bmc.systemId}, tls: "true", ssl_verify: false }`;
    });
    const fencingPath = join(directory, 'fencing.yaml');
    writeFileSync(fencingPath, `FencingConfig:\n${fencing.join('\n')}\n`);
    env = {
      LIFEGUARD_AMQP_URL: vhost.url,
      LIFEGUARD_REDIS_KEY_PREFIX: prefix,
      LIFEGUARD_CLOUD_SIM_URL: sim.urls.api,
      OS_AUTH_TYPE: 'admin_token',
      OS_TOKEN: String(entry.auth.token),
      OS_ENDPOINT: String(entry.auth.endpoint),
      OS_IMAGE_ENDPOINT_OVERRIDE: String(entry.image_endpoint_override),
      INSTANCEHA_CONFIG_PATH: configPath,
    };
    startWorker('monitor-under-test', 'node-monitor', {
      LIFEGUARD_UNSAFE_SHORT_INTERVALS: 'true',
      LIFEGUARD_NODE_MONITOR_LEASE_TTL_SECONDS: '3',
      LIFEGUARD_KDUMP_LISTEN_ADDRESS: '127.0.0.1',
      LIFEGUARD_HEARTBEAT_LISTEN_ADDRESS: '127.0.0.1',
      UDP_PORT: '0',
      HEARTBEAT_PORT: '0',
    });
    startWorker('fencer-under-test', 'fencing-worker', {
      FENCING_CONFIG_PATH: fencingPath,
      LIFEGUARD_FENCING_ALLOW_LOOPBACK: 'true',
    });
    startWorker('evacuator-under-test', 'evacuation-worker', {
      LIFEGUARD_UNSAFE_SHORT_INTERVALS: 'true',
      LIFEGUARD_EVACUATION_FIRST_CHECK_SECONDS: '0.2',
      LIFEGUARD_EVACUATION_POLL_SECONDS: '0.2',
      LIFEGUARD_EVACUATION_RECHECK_SECONDS: '0.5',
    });
  });

  after(async () => {
    for (const worker of workers) await worker.stop();
    await sim.close();
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
    await vhost.delete();
  });

  it('status lists the three workers ready and the node monitor as leader', async () => {
    const status = await waitFor(
      'three workers ready and a leader',
      async () => {
        const run = await lifeguard(['status', '--json'], env);
        if (run.code !== 0) return undefined;
        const body = run.json<SystemStatus>();
        return body.workers.filter((each) => each.readiness === 'ready').length === 3 && body.leader
          ? body
          : undefined;
      },
      90_000,
      500,
    ).catch((error: unknown) => {
      throw new Error(
        `${(error as Error).message}\n${workers.map((each) => `${each.name}:\n${each.output.join('')}`).join('\n')}`,
      );
    });
    assert.deepEqual(
      status.workers.map((each) => [each.service, each.instance]),
      [
        ['evacuation-worker', 'evacuator-under-test'],
        ['fencing-worker', 'fencer-under-test'],
        ['node-monitor', 'monitor-under-test'],
      ],
    );
    assert.match(
      status.leader?.holder ?? '',
      /^monitor-under-test#[0-9a-f]{8}$/,
      'the instance name and a per-process suffix',
    );
    assert.ok((status.leader?.token ?? 0) >= 1);
  });

  it('kill-host --watch follows the recovery through the evacuation to the re-enable of the returned host', async () => {
    const run = await lifeguard(['sim', 'kill-host', 'compute2', '--watch', '120'], env);
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    const order = [
      'host.down',
      'host.fenced',
      'host.evacuation.started',
      'host.evacuated',
      'host.reenabled',
    ].map((type) => run.stdout.indexOf(`  ${type}  `));
    assert.ok(
      order.every((position, index) => position > 0 && (index === 0 || position > order[index - 1]!)),
      `events in order:\n${run.stdout}`,
    );
    assert.match(run.stdout, /host\.fenced {2}proof=power-off-confirmed method=redfish/);
    assert.ok(
      run.stdout.split('\n').filter((line) => line.includes('  host.recovery.requested  ')).length <= 2,
      `host.recovery.requested, published every poll until the re-enable, is shown once per change:\n${run.stdout}`,
    );
    assert.equal(sim.model.servers.countOnHost('compute2'), 0, 'every server left compute2');

    // Powered on again after the evacuation, its nova-compute restarts and lifeguard re-enables it.
    const back = await waitFor(
      'compute2 re-enabled',
      async () => {
        const hosts = (await lifeguard(['hosts', '--json'], env)).json<HostView[]>();
        const host = hosts.find((each) => each.host === 'compute2');
        return host && host.status === 'enabled' && !host.forcedDown && host.state === 'up'
          ? host
          : undefined;
      },
      90_000,
      500,
    );
    assert.equal(back.incident, null, 'the incident is closed');
    const incidents = await lifeguard(['incidents', '--json'], env);
    const [incident] = incidents.json<Array<{ id: string; host: string; state: string; outcome: string }>>();
    assert.equal(incident?.host, 'compute2');
    assert.equal(incident?.state, 'closed');
    const timeline = await lifeguard(['incident', incident!.id], env);
    assert.match(timeline.stdout, /host\.powered-on/);
    assert.match(timeline.stdout, /host\.reenabled/);
  });
});
