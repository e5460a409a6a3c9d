import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { after, before, describe, it } from 'node:test';
import { KdumpStore } from '@lifeguard/instance-ha';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import { captureEvents, type EventCapture } from './support/event-capture.ts';
import {
  type MonitorProcess,
  startMonitorProcess,
  writeInstanceHaConfig,
} from './support/monitor-process.ts';
import { realNova } from './support/real-nova.ts';

const FENCE_KDUMP_SEND = '/usr/libexec/fence-agents/fence_kdump_send';
const POLL = 1;
const DELTA = 6;
const KDUMP_TIMEOUT = 5;

async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

describe('node-monitor kdump handling against real Nova (CHECK_KDUMP)', () => {
  const cloud = realNova();
  const [, crashed, silent] = cloud.hosts as [string, string, string];
  const redis = testRedis();
  const prefix = randomKeyPrefix('monitor-kdump');
  const servers: string[] = [];
  let vhost: TestVhost;
  let events: EventCapture;
  let monitor: MonitorProcess;
  let sender: ChildProcess | null = null;
  let kdumpPort: number;

  before(async () => {
    vhost = await createTestVhost('monitor-kdump');
    events = await captureEvents(vhost.url);
    await cloud.restore();
    servers.push(
      ...(await cloud.bootEach([
        ['kdump-crashed', crashed],
        ['kdump-silent', silent],
      ])),
    );
    kdumpPort = await freeUdpPort();
    monitor = startMonitorProcess('monitor-kdump', {
      ...cloud.monitorEnv(vhost.url, prefix, 3),
      UDP_PORT: String(kdumpPort),
      INSTANCEHA_CONFIG_PATH: writeInstanceHaConfig({
        POLL,
        DELTA,
        THRESHOLD: 100,
        TAGGED_AGGREGATES: false,
        CHECK_KDUMP: true,
        KDUMP_TIMEOUT,
        KDUMP_ADDRESS_MAP: `127.0.0.1=${crashed}.example.com`,
      }),
    });
    await monitor.ready('ready');
  });

  after(async () => {
    sender?.kill('SIGKILL');
    monitor.kill('SIGKILL');
    await monitor.exited;
    await cloud.restoreHostsAndDelete(servers);
    await events.close();
    await vhost.delete();
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  it('marks a host sending fence_kdump packets kdump-fenced; waits KDUMP_TIMEOUT for a silent one, then admits it normally', async () => {
    await Promise.all([cloud.hangCompute(crashed), cloud.hangCompute(silent)]);
    // the crashed host's kdump kernel sends from 127.0.0.1 (mapped to it), every second
    sender = spawn(
      FENCE_KDUMP_SEND,
      ['-p', String(kdumpPort), '-c', '0', '-i', '1', '-f', 'ipv4', '127.0.0.1'],
      { stdio: 'ignore' },
    );
    const store = new KdumpStore(redis, prefix);
    await waitFor(
      'a recorded kdump packet',
      async () => (await store.lastPacketAt(crashed)) ?? undefined,
      10_000,
    );

    const crashedDown = await waitFor(
      `host.down for ${crashed}`,
      () => events.ofType('host.down').find((event) => event.data.host === crashed),
      (DELTA + POLL + 5) * 1000,
    );
    assert.equal(crashedDown.data.kdumpFenced, true);
    assert.equal(crashedDown.data.resume, false);

    const waiting = await waitFor(
      `kdump-wait for ${silent}`,
      () =>
        events
          .ofType('admission.blocked')
          .find((event) => event.data.gate === 'kdump-wait' && event.data.hosts.includes(silent)),
      (DELTA + POLL + 5) * 1000,
    );
    const silentDown = await waitFor(
      `host.down for ${silent}`,
      () => events.ofType('host.down').find((event) => event.data.host === silent),
      (KDUMP_TIMEOUT + POLL + 3) * 1000,
    );
    assert.equal(silentDown.data.kdumpFenced, false);
    const waited = Date.parse(silentDown.occurredAt) - Date.parse(waiting.occurredAt);
    assert.ok(waited >= (KDUMP_TIMEOUT - POLL) * 1000, `admitted after waiting ${waited} ms`);
    assert.notEqual(
      await store.waitStartedAt(silent),
      null,
      'the wait clock is kept for the fencing worker, which continues it instead of waiting again',
    );
  });

  it('counts garbage datagrams on the kdump port and ignores them', async () => {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve, reject) =>
      socket.send(Buffer.from('not a kdump message'), kdumpPort, '127.0.0.1', (error) =>
        error ? reject(error) : resolve(),
      ),
    );
    socket.close();
    const port = await monitor.adminPort();
    const metrics = await waitFor(
      'the garbage counter',
      async () => {
        const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        return /lifeguard_kdump_packets_total\{result="wrong-length",service="node-monitor"\} 1/.test(text)
          ? text
          : undefined;
      },
      10_000,
    );
    assert.match(metrics, /lifeguard_kdump_packets_total\{result="accepted",service="node-monitor"\} [1-9]/);
    assert.match(metrics, /lifeguard_host_down_total\{host="[^"]+",service="node-monitor"\} 1/);
  });
});
