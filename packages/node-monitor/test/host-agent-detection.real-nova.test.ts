// HEARTBEAT_DETECTION against real Nova (test/harness/real-nova): each compute with a real host agent
// (`lifeguard-host-agent` in a network namespace with a management and a storage network), the node
// monitor as operators run it. A host that dies with its agent is failed on heartbeats while Nova still
// calls it up; each false positive the channel could make fails nothing.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hostAgentKeys } from '@lifeguard/instance-ha';
import {
  closedPort,
  createNetworkNamespaces,
  createTestVhost,
  deleteKeysWithPrefix,
  lifeguardEntryPoint,
  type NetworkNamespaces,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
  waitFor,
  withoutNodeOptions,
} from '@lifeguard/testing';
import { captureEvents, type EventCapture } from './support/event-capture.ts';
import {
  type MonitorProcess,
  startMonitorProcess,
  writeInstanceHaConfig,
} from './support/monitor-process.ts';
import { realNova } from './support/real-nova.ts';

// DELTA is long: only the host agent channel can fail a host within these tests. The harness's
// computes report every 2 s (NOVA_REPORT_INTERVAL).
const DELTA = 60;
const directory = mkdtempSync(join(tmpdir(), 'monitor-detection-'));
const keyPath = join(directory, 'hmac-key');
const KEY_HEX = 'd4'.repeat(32);
writeFileSync(keyPath, KEY_HEX);

describe('HEARTBEAT_DETECTION against real Nova, a host agent on two networks on every compute', () => {
  const cloud = realNova();
  const hosts = cloud.hosts.slice(0, 3) as [string, string, string];
  const [victim, survivor, cut] = hosts;
  const redis = testRedis();
  const prefixes: string[] = [];
  const servers: string[] = [];
  const agents = new Map<string, ChildProcess>();
  const monitors: MonitorProcess[] = [];
  let network: NetworkNamespaces;
  let vhost: TestVhost;
  let events: EventCapture;
  let heartbeatPort = 0;

  /** (Re)starts `host`'s agent in its own namespace, sending on both networks; `env` adds to its settings. */
  const startAgent = (host: string, env: Record<string, string> = {}) => {
    agents.get(host)?.kill('SIGKILL');
    const machine = network.machines[hosts.indexOf(host)]!;
    const [management, storage] = network.bridgeAddresses as [string, string];
    const { command, args } = machine.commandInside(process.execPath, lifeguardEntryPoint('host-agent'));
    const agent = spawn(command, args, {
      env: {
        ...withoutNodeOptions(process.env),
        HOST_AGENT_HOST: host,
        HEARTBEAT_HMAC_KEY_PATH: keyPath,
        HOST_AGENT_WATCHED_PROCESSES: 'lg-none',
        LIFEGUARD_HTTP_PORT: '0',
        HEARTBEAT_NETWORK_MANAGEMENT: `${management}:${heartbeatPort} from ${machine.addresses[0]}`,
        HEARTBEAT_NETWORK_STORAGE: `${storage}:${heartbeatPort} from ${machine.addresses[1]}`,
        ...env,
      },
      stdio: 'ignore',
    });
    agents.set(host, agent);
  };
  /** A node monitor on the harness; `config` adds to (or replaces) its config.yaml keys. */
  const startMonitor = (name: string, config: Record<string, string | number | boolean> = {}) => {
    const prefix = randomKeyPrefix('monitor-detection');
    prefixes.push(prefix);
    const monitor = startMonitorProcess(name, {
      ...cloud.monitorEnv(vhost.url, prefix, 3),
      INSTANCEHA_CONFIG_PATH: writeInstanceHaConfig({
        POLL: 5,
        DELTA,
        THRESHOLD: 100,
        TAGGED_AGGREGATES: false,
        CHECK_HEARTBEAT: true,
        HEARTBEAT_DETECTION: true,
        HEARTBEAT_DOWN_AFTER: 2,
        NOVA_REPORT_INTERVAL: 2,
        ...config,
      }),
      HEARTBEAT_PORT: String(heartbeatPort),
      HEARTBEAT_HMAC_KEY_PATH: keyPath,
      LIFEGUARD_HEARTBEAT_LISTEN_ADDRESS: '0.0.0.0',
    });
    monitors.push(monitor);
    return monitor;
  };
  const ofHost = <
    Type extends
      | 'host.down'
      | 'admission.blocked'
      | 'host.agent.silent'
      | 'host.network.silent'
      | 'host.compute-service.disabled'
      | 'host.compute-service.enabled',
  >(
    type: Type,
    host: string,
  ) =>
    events.ofType(type).filter((event) => {
      const { data } = event as unknown as { data: { host?: string; hosts?: string[] } };
      return data.host === host || data.hosts?.includes(host) === true;
    });
  /** Waits until every agent is heard on both networks, as Redis holds it. */
  const everyAgentHeard = (prefix: string) =>
    waitFor(
      'every agent heard on both networks',
      async () => {
        for (const name of ['management', 'storage']) {
          const times = await redis.hgetall(`${prefix}:node-monitor:host-agent:network:${name}`);
          if (!hosts.every((host) => Date.now() - Number(times[host] ?? 0) < 1500)) return false;
        }
        return true;
      },
      30_000,
    );
  const cyclesOf = (monitor: MonitorProcess) =>
    monitor.records().filter((record) => /Poll cycle completed/.test(String(record.msg))).length;

  before(async () => {
    vhost = await createTestVhost('monitor-detection');
    events = await captureEvents(vhost.url);
    heartbeatPort = await closedPort();
    network = await createNetworkNamespaces(3, { networks: 2 });
    await cloud.restore();
    servers.push(...(await cloud.bootEach(hosts.map((host) => [`detection-${host}`, host] as const))));
    for (const host of hosts) startAgent(host);
  });

  after(async () => {
    for (const agent of agents.values()) agent.kill('SIGKILL');
    for (const monitor of monitors) monitor.kill('SIGKILL');
    await Promise.all(monitors.map((monitor) => monitor.exited));
    await network.remove();
    await cloud.restoreHostsAndDelete(servers);
    await events.close();
    await vhost.delete();
    for (const prefix of prefixes) await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  it('false positive: the whole cloud cut off from the monitor and Nova, coming back in waves, fences nobody (heartbeat cliff, then the mass-event hold-down)', async () => {
    const monitor = startMonitor('monitor-cliff');
    await monitor.ready();
    await everyAgentHeard(prefixes.at(-1)!);
    for (const machine of network.machines) network.cut(machine);
    await Promise.all(hosts.map((host) => cloud.hangCompute(host)));
    await waitFor(
      'the cliff holding every host',
      () =>
        hosts.every((host) =>
          ofHost('admission.blocked', host).some((event) => event.data.gate === 'heartbeat-cliff'),
        ),
      60_000,
    );
    // Waves: two hosts come back, the last one a while later.
    for (const [index, host] of hosts.entries()) {
      network.heal(network.machines[index]!);
      await cloud.startCompute(host);
      if (index === 1) {
        const cycles = cyclesOf(monitor);
        await waitFor(
          'two polls with the last host still cut off',
          () => cyclesOf(monitor) >= cycles + 2,
          90_000,
        );
      }
    }
    await everyAgentHeard(prefixes.at(-1)!);
    const cycles = cyclesOf(monitor);
    await waitFor('a poll with every host back', () => cyclesOf(monitor) > cycles, 60_000);
    assert.deepEqual(events.ofType('host.down'), [], 'nothing failed');
    monitor.kill('SIGTERM');
    await monitor.exited;
  });

  it('a host that dies with its agent is failed on heartbeats while Nova still calls it up', async () => {
    const monitor = startMonitor('monitor-detection');
    await monitor.ready();
    await everyAgentHeard(prefixes.at(-1)!);
    // A host that dies stops both at the same moment. Killing nova-compute through the harness's
    // scripts takes seconds on a loaded machine, and a report it made meanwhile, after the agent's last
    // heartbeat, would rightly say the host still ran (agent-silent-host-reports): its pid is read
    // first, and both are killed at once.
    const computePid = await cloud.computePid(victim);
    assert.ok(computePid, `${victim}'s nova-compute runs`);
    const killedAt = Date.now();
    process.kill(computePid, 'SIGKILL');
    agents.get(victim)!.kill('SIGKILL');
    const logSinceKill = () =>
      monitor
        .records()
        .filter((record) => Date.parse(String(record.time)) >= killedAt - 1000)
        .map((record) => JSON.stringify(record));
    // Heartbeats silent on both networks, then a poll of real Nova: bounded for a loaded machine (a
    // whole run at load 20 to 25 ran out 30 s), and the monitor's log is part of a failure.
    const [down] = await waitFor(
      `host.down for ${victim}`,
      () => (ofHost('host.down', victim).length > 0 ? ofHost('host.down', victim) : undefined),
      90_000,
    ).catch((error: Error) => {
      throw new Error([error.message, "the monitor's log from the kill on:", ...logSinceKill()].join('\n'));
    });
    const { evidence } = down!.data;
    assert.match(
      evidence.hostAgentSilence ?? '',
      /silent on every network \(management, storage\)/,
      [
        `host.down evidence ${JSON.stringify(evidence)}, ${down!.occurredAt}; killed at ${new Date(killedAt).toISOString()}`,
        "the monitor's log from the kill on:",
        ...logSinceKill(),
      ].join('\n'),
    );
    assert.equal(evidence.state, 'up', 'Nova had not called it down yet');
    assert.ok(evidence.ageSeconds! < DELTA, `its report ${evidence.ageSeconds} s old, younger than DELTA`);
  });

  it('false positive: an agent that dies on a live host fails nothing; host.agent.silent names the host', async () => {
    agents.get(survivor)!.kill('SIGKILL');
    const [silent] = await waitFor(
      `host.agent.silent for ${survivor}`,
      () =>
        ofHost('host.agent.silent', survivor).length > 0 ? ofHost('host.agent.silent', survivor) : undefined,
      30_000,
    );
    assert.match(silent!.data.reason, /nova-compute reported .* after the last heartbeat/);
    const monitor = monitors.at(-1)!;
    const cycles = cyclesOf(monitor);
    await waitFor('two more polls', () => cyclesOf(monitor) >= cycles + 2, 90_000);
    assert.deepEqual(ofHost('host.down', survivor), []);
    startAgent(survivor);
  });

  it('false positive: a host cut off on its storage network only fails nothing, even with its nova-compute hung; host.network.silent names the network', async () => {
    // Only what this cut causes: the cut-off-cloud test before it left host.network.silent events of
    // every network for every host in the journal.
    const since = Date.now();
    const silentSince = () =>
      ofHost('host.network.silent', cut).filter((event) => Date.parse(event.occurredAt) >= since);
    network.cut(network.machines[hosts.indexOf(cut)]!, 1);
    // nova-compute hung as well: its report goes overdue, so Nova no longer shows the host alive and
    // only the agent still heard on the management network keeps it from being failed (the rule that
    // a host is silent only when silent on every network).
    await cloud.hangCompute(cut);
    try {
      const [silent] = await waitFor(
        `host.network.silent for ${cut}`,
        () => (silentSince().length > 0 ? silentSince() : undefined),
        30_000,
      );
      assert.equal(silent!.data.network, 'storage');
      const monitor = monitors.at(-1)!;
      const cycles = cyclesOf(monitor);
      await waitFor('two more polls', () => cyclesOf(monitor) >= cycles + 2, 90_000);
      assert.deepEqual(ofHost('host.down', cut), []);
    } finally {
      network.heal(network.machines[hosts.indexOf(cut)]!, 1);
      await cloud.startCompute(cut);
    }
  });

  it("nova-compute stopped on a live host: its compute service is disabled under lifeguard's marker, nothing fenced, and enabled again once it runs", async () => {
    // The host's real agent, watching nova-compute in a /proc of its own (HOST_AGENT_PROC_PATH) that
    // holds one link: to the /proc entry of the harness's nova-compute of that host. Every compute's
    // nova-compute runs on this one machine, so the agent, reading the machine's /proc, would see
    // them all; through the link it sees its host's alone, and sees it gone when it ends.
    const host = cut;
    const procPath = mkdtempSync(join(tmpdir(), 'agent-proc-'));
    const mirrorCompute = async () => {
      const pid = await cloud.computePid(host);
      assert.ok(pid !== null, `${host}'s nova-compute runs`);
      symlinkSync(`/proc/${pid}`, join(procPath, String(pid)));
    };
    await mirrorCompute();
    startAgent(host, { HOST_AGENT_WATCHED_PROCESSES: 'nova-compute', HOST_AGENT_PROC_PATH: procPath });
    // The new agent's first report, as the monitor stored it, before nova-compute is killed.
    await waitFor(
      `${host}'s agent reporting nova-compute running`,
      async () => {
        const stored = await redis.hget(hostAgentKeys(prefixes.at(-1)!).processes, host);
        return stored !== null && JSON.parse(stored).processes['nova-compute'] === 'running';
      },
      60_000,
    );
    try {
      await cloud.killCompute(host);
      const disabled = await waitFor(
        `${host}'s compute service disabled`,
        async () => {
          const service = await cloud.service(host);
          return service.status === 'disabled' ? service : undefined;
        },
        30_000,
      );
      assert.match(disabled.disabled_reason ?? '', /^lifeguard process-stopped: \S+ process=nova-compute$/);
      await waitFor(
        `host.compute-service.disabled for ${host}`,
        () => ofHost('host.compute-service.disabled', host).length > 0,
        30_000,
      );
      await cloud.startCompute(host);
      await mirrorCompute();
      const enabled = await waitFor(
        `${host}'s compute service enabled again`,
        async () => {
          const service = await cloud.service(host);
          return service.status === 'enabled' ? service : undefined;
        },
        30_000,
      );
      assert.equal(enabled.disabled_reason, null);
      await waitFor(
        `host.compute-service.enabled for ${host}`,
        () => ofHost('host.compute-service.enabled', host).length > 0,
        30_000,
      );
      assert.deepEqual(ofHost('host.down', host), [], 'nothing failed');
    } finally {
      rmSync(procPath, { recursive: true, force: true });
      startAgent(host);
    }
  });
});
