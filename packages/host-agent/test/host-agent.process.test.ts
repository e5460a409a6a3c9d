// The host agent as operators run it (`lifeguard-host-agent`, a process of its own), on a compute with
// two networks (a network namespace with a leg on each of two bridges), sending to real node-monitor
// heartbeat listeners; its configuration refused at start naming the key; its sends going on when a
// monitor does not resolve.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { HostAgentReport } from '@lifeguard/contracts';
import { HeartbeatListener, HeartbeatStore, HostAgentReports, HostAgentWatch } from '@lifeguard/node-monitor';
import { createLogger } from '@lifeguard/runtime';
import {
  closedPort,
  createNetworkNamespaces,
  deleteKeysWithPrefix,
  lifeguardEntryPoint,
  type NetworkNamespaces,
  randomKeyPrefix,
  testRedis,
  waitFor,
  withoutNodeOptions,
} from '@lifeguard/testing';
import { Registry } from 'prom-client';

const key = Buffer.from('5a'.repeat(32), 'hex');
const directory = mkdtempSync(join(tmpdir(), 'host-agent-'));
const keyPath = join(directory, 'hmac-key');
writeFileSync(keyPath, key.toString('hex'));
const redis = testRedis();
const prefix = randomKeyPrefix('host-agent');
const logger = createLogger({ service: 'host-agent-test', level: 'silent' });
/** What every listener of these tests records, as the node-monitor replicas record it. */
const reports = new HostAgentReports(redis, prefix);

/** A node-monitor heartbeat listener on `host`, with every heartbeat it accepted. */
async function listen(
  host: string,
): Promise<{ listener: HeartbeatListener; received: Array<{ host: string; report?: HostAgentReport }> }> {
  const listener = new HeartbeatListener({
    port: 0,
    host,
    keys: [key],
    store: new HeartbeatStore(redis, prefix),
    hostAgents: reports,
    logger,
  });
  const received: Array<{ host: string; report?: HostAgentReport }> = [];
  listener.on('heartbeat', (heartbeat: { host: string; report?: HostAgentReport }) =>
    received.push(heartbeat),
  );
  await listener.start();
  return { listener, received };
}

/** The agent's process, with its output kept; `command` runs it elsewhere (inside a namespace). */
function startAgent(
  env: NodeJS.ProcessEnv,
  inside?: (command: string, args: string[]) => { command: string; args: string[] },
): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const args = lifeguardEntryPoint('host-agent');
  const { command, args: argv } = inside
    ? inside(process.execPath, args)
    : { command: process.execPath, args };
  const child = spawn(command, argv, {
    env: {
      ...withoutNodeOptions(process.env),
      LIFEGUARD_HTTP_PORT: '0',
      HEARTBEAT_HMAC_KEY_PATH: keyPath,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => text, exited };
}

/**
 * A UDP socket on 127.0.0.1 that counts the datagrams it receives (a stand-in monitor for an agent
 * that must send nothing). `settled()` resolves once every datagram sent to it so far was counted: a
 * marker sent after them comes back in order on loopback.
 */
async function datagramCounter(): Promise<{
  port: number;
  settled: () => Promise<number>;
  close: () => void;
}> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  let count = 0;
  let marker: (() => void) | null = null;
  socket.on('message', (message) => {
    if (message.toString() === 'marker') marker?.();
    else count++;
  });
  const port = socket.address().port;
  return {
    port,
    settled: () =>
      new Promise<number>((resolve) => {
        marker = () => resolve(count);
        socket.send('marker', port, '127.0.0.1');
      }),
    close: () => socket.close(),
  };
}

after(async () => {
  await deleteKeysWithPrefix(redis, prefix);
  await redis.quit();
});

describe('lifeguard-host-agent on a compute with a management and a storage network', () => {
  let network: NetworkNamespaces;
  const stops: Array<() => Promise<unknown>> = [];
  before(async () => {
    network = await createNetworkNamespaces(1, { networks: 2 });
    stops.push(() => network.remove());
  });
  after(async () => {
    for (const stop of stops.reverse()) await stop();
  });

  it('sends every monitor of each network its signed heartbeat from that network, saying which processes run; a cut network stops only its own', async () => {
    const [management, storage] = network.bridgeAddresses as [string, string];
    const compute = network.machines[0]!;
    const monitors = [await listen(management), await listen(management), await listen(storage)];
    for (const monitor of monitors) stops.push(() => monitor.listener.stop());
    // A stand-in for nova-compute: a process whose argv[0] is the watched name.
    const stand = spawn('bash', ['-c', 'exec -a lg-test-compute sleep 600'], { stdio: 'ignore' });
    stops.push(async () => stand.kill('SIGKILL'));
    const agent = startAgent(
      {
        HOST_AGENT_HOST: 'compute-7.example.org',
        HEARTBEAT_INTERVAL: '1',
        HOST_AGENT_WATCHED_PROCESSES: 'lg-test-compute,lg-test-absent',
        HEARTBEAT_NETWORK_MANAGEMENT: `${management}:${monitors[0]!.listener.port},${management}:${monitors[1]!.listener.port} from ${compute.addresses[0]}`,
        HEARTBEAT_NETWORK_STORAGE: `${storage}:${monitors[2]!.listener.port} from ${compute.addresses[1]}`,
      },
      (command, args) => compute.commandInside(command, args),
    );
    stops.push(async () => {
      agent.child.kill('SIGKILL');
      await agent.exited;
    });

    await waitFor(
      'a heartbeat at each monitor',
      () => monitors.every((each) => each.received.length > 0),
      30_000,
    ).catch((error: Error) => assert.fail(`${error.message}\n${agent.output()}`));
    assert.deepEqual(monitors[0]!.received[0], {
      host: 'compute-7',
      report: {
        network: 'management',
        processes: { 'lg-test-compute': 'running', 'lg-test-absent': 'stopped' },
      },
    });
    assert.equal(monitors[1]!.received[0]!.report!.network, 'management');
    assert.equal(monitors[2]!.received[0]!.report!.network, 'storage');

    stand.kill('SIGKILL');
    await waitFor('a heartbeat saying the stand-in stopped', () =>
      monitors[2]!.received.some((each) => each.report?.processes['lg-test-compute'] === 'stopped'),
    );

    network.cut(compute, 1);
    // Heartbeats already on their way when the link went down may still come in: count from the next management one.
    const cutAt = monitors[0]!.received.length;
    await waitFor('one management heartbeat after the cut', () => monitors[0]!.received.length > cutAt);
    const storageAtCut = monitors[2]!.received.length;
    await waitFor('three more management heartbeats', () => monitors[0]!.received.length >= cutAt + 4);
    assert.equal(
      monitors[2]!.received.length,
      storageAtCut,
      'nothing reached the storage monitor while its network was cut',
    );
    // The leading node monitor's view of it: storage silent for this live host, nothing else.
    const events = { publish: async () => undefined };
    const watch = new HostAgentWatch({
      reports,
      downAfterSeconds: 3,
      registry: new Registry(),
      logger,
      events,
    });
    const [finding] = await waitFor('the watch to name the silent network', async () => {
      const findings = await watch.review();
      return findings[0]?.silentOn.length ? findings : undefined;
    });
    assert.deepEqual(finding, {
      host: 'compute-7',
      heardOn: ['management'],
      silentOn: ['storage'],
      stoppedProcesses: ['lg-test-absent', 'lg-test-compute'],
    });
    network.heal(compute, 1);
    await waitFor(
      'storage heartbeats again after the heal',
      () => monitors[2]!.received.length > storageAtCut,
      30_000,
    );
    assert.equal(agent.child.exitCode, null, 'the agent kept running');

    agent.child.kill('SIGTERM');
    assert.equal(await agent.exited, 0);
  });
});

describe('lifeguard-host-agent start-up and sending', () => {
  it('goes on sending to the monitor it reaches when another does not resolve, counts the failures, and stops on SIGTERM with status 0', async () => {
    const monitor = await listen('127.0.0.1');
    const httpPort = await closedPort();
    try {
      const agent = startAgent({
        HOST_AGENT_HOST: 'compute-8',
        HEARTBEAT_INTERVAL: '1',
        LIFEGUARD_HTTP_PORT: String(httpPort),
        HEARTBEAT_NETWORK_MANAGEMENT: `monitor-that-does-not-exist.invalid,127.0.0.1:${monitor.listener.port}`,
      });
      try {
        await waitFor('three heartbeats', () => monitor.received.length >= 3, 30_000).catch((error: Error) =>
          assert.fail(`${error.message}\n${agent.output()}`),
        );
        assert.match(agent.output(), /not sent to monitor-that-does-not-exist\.invalid:7411/);
        assert.equal(
          agent
            .output()
            .split('\n')
            .filter((line) => line.includes('not sent to')).length,
          1,
          'the failing monitor is logged once, not at every heartbeat',
        );
        const metrics = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
        const count = (name: string) =>
          Number(new RegExp(`^${name}\\{network="management"\\} (\\d+)$`, 'm').exec(metrics)?.[1] ?? 0);
        assert.ok(count('lifeguard_host_agent_heartbeat_send_errors_total') >= 1, metrics);
        assert.ok(count('lifeguard_host_agent_heartbeats_sent_total') >= 3, metrics);
        const health = await fetch(`http://127.0.0.1:${httpPort}/healthz`);
        assert.equal(health.status, 200);
        for (const line of agent.output().trim().split('\n')) JSON.parse(line);
        assert.ok(!agent.output().includes(key.toString('hex')), 'the key is never logged');
      } finally {
        agent.child.kill('SIGTERM');
      }
      assert.equal(await agent.exited, 0);
    } finally {
      await monitor.listener.stop();
    }
  });

  const refusals: Array<[string, NodeJS.ProcessEnv, RegExp]> = [
    [
      'a key file that does not exist',
      { HEARTBEAT_HMAC_KEY_PATH: join(directory, 'missing') },
      /HEARTBEAT_HMAC_KEY_PATH: \S+missing cannot read: ENOENT/,
    ],
    [
      'no network',
      { HEARTBEAT_NETWORK_MANAGEMENT: undefined },
      /HEARTBEAT_NETWORK_<NAME>: at least one network/,
    ],
    [
      'a source address that is not this host’s',
      { HEARTBEAT_NETWORK_MANAGEMENT: '127.0.0.1 from 192.0.2.77' },
      /HEARTBEAT_NETWORK_MANAGEMENT: cannot send from 192\.0\.2\.77: EADDRNOTAVAIL/,
    ],
    [
      'a health address that is not this host’s',
      { LIFEGUARD_HTTP_HOST: '192.0.2.77', LIFEGUARD_HTTP_PORT: '9405' },
      /LIFEGUARD_HTTP_HOST: cannot serve \/healthz and \/metrics on 192\.0\.2\.77:9405 \(EADDRNOTAVAIL\): the host address is not one of this machine’s addresses/,
    ],
    [
      'a /proc path that does not exist',
      { HOST_AGENT_PROC_PATH: '/nope' },
      /HOST_AGENT_PROC_PATH: \/nope cannot be listed \(ENOENT\)/,
    ],
  ];
  for (const [name, env, message] of refusals) {
    it(`stops at start with status 78 on ${name}, naming the key, and sends nothing`, async () => {
      const monitor = await datagramCounter();
      try {
        const agent = startAgent({
          HOST_AGENT_HOST: 'compute-9',
          HEARTBEAT_NETWORK_MANAGEMENT: `127.0.0.1:${monitor.port}`,
          ...env,
        });
        assert.equal(await agent.exited, 78, agent.output());
        assert.match(agent.output(), message);
        assert.doesNotMatch(agent.output(), /\n\s+at /, 'no stack trace');
        assert.equal(await monitor.settled(), 0, 'no heartbeat was sent');
      } finally {
        monitor.close();
      }
    });
  }

  it('stops at start with status 78 when its health port is taken, naming LIFEGUARD_HTTP_PORT, and sends nothing', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const monitor = await datagramCounter();
    try {
      const agent = startAgent({
        HOST_AGENT_HOST: 'compute-9',
        HEARTBEAT_NETWORK_MANAGEMENT: `127.0.0.1:${monitor.port}`,
        LIFEGUARD_HTTP_PORT: String((holder.address() as AddressInfo).port),
      });
      assert.equal(await agent.exited, 78, agent.output());
      assert.match(agent.output(), /LIFEGUARD_HTTP_PORT: cannot serve .*EADDRINUSE/);
      assert.doesNotMatch(agent.output(), /\n\s+at /, 'no stack trace');
      // A heartbeat sent before the agent gave up would count this host alive for DELTA.
      assert.equal(await monitor.settled(), 0, 'no heartbeat was sent');
    } finally {
      monitor.close();
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });

  it('answers /healthz 503 while no heartbeat reaches the network (its only monitor does not resolve)', async () => {
    const httpPort = await closedPort();
    const agent = startAgent({
      HOST_AGENT_HOST: 'compute-10',
      LIFEGUARD_HTTP_PORT: String(httpPort),
      HEARTBEAT_NETWORK_MANAGEMENT: 'monitor-that-does-not-exist.invalid',
    });
    try {
      await waitFor(
        'the failed send logged',
        () => /not sent to monitor-that-does-not-exist/.test(agent.output()),
        30_000,
      );
      const health = await waitFor(
        'the health endpoint',
        () => fetch(`http://127.0.0.1:${httpPort}/healthz`).catch(() => undefined),
        30_000,
      );
      assert.equal(health.status, 503);
      assert.match(((await health.json()) as { status: string }).status, /^heartbeats not sent/);
    } finally {
      agent.child.kill('SIGTERM');
    }
    assert.equal(await agent.exited, 0);
  });
});
