import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { transitionEventId } from '@lifeguard/contracts';
import { createLogger } from '@lifeguard/runtime';
import { CapturedLines, deleteKeysWithPrefix, randomKeyPrefix, testRedis } from '@lifeguard/testing';
import { Registry } from 'prom-client';
import { HostAgentReports, HostAgentWatch } from '../src/index.ts';

const redis = testRedis();
const start = new Date('2026-12-04T12:00:00Z');
const at = (seconds: number) => new Date(start.getTime() + seconds * 1000);
const running = { 'nova-compute': 'running', libvirtd: 'running' } as const;

after(async () => {
  await redis.quit();
});

/** A watch over a fresh prefix whose clock the test moves. */
function setUp() {
  const prefix = randomKeyPrefix('host-agents');
  const reports = new HostAgentReports(redis, prefix);
  const registry = new Registry();
  const lines = new CapturedLines();
  let now = start;
  const published: Array<{ type: string; data: Record<string, unknown>; id?: string }> = [];
  let refusePublish = false;
  const events = {
    publish: async (type: string, data: unknown, options?: { id?: string }) => {
      if (refusePublish) throw new Error('the broker is away');
      published.push({
        type,
        data: data as Record<string, unknown>,
        ...(options?.id ? { id: options.id } : {}),
      });
    },
  };
  const watch = new HostAgentWatch({
    events,
    reports,
    downAfterSeconds: 3,
    registry,
    logger: createLogger({ service: 'test', level: 'info', destination: lines }),
    now: () => now,
  });
  const gauge = async (name: string) =>
    (await registry.getSingleMetric(name)!.get()).values.map(({ labels, value }) => ({ ...labels, value }));
  return {
    prefix,
    reports,
    watch,
    published,
    refuse: (value: boolean) => {
      refusePublish = value;
    },
    lines,
    gauge,
    setNow: (value: Date) => {
      now = value;
    },
  };
}

describe('the node monitor watching the host agents (real Redis, an injected clock)', () => {
  it('names a network a live host went silent on, once, and says when it is heard again; a host silent everywhere is left to the gates', async () => {
    const { prefix, reports, watch, lines, gauge, setNow, published } = setUp();
    try {
      for (const network of ['management', 'storage']) {
        await reports.record('compute-1', { network, processes: running }, at(0));
        await reports.record('compute-2', { network, processes: running }, at(0));
      }
      setNow(at(1));
      assert.deepEqual(
        (await watch.review()).map((each) => each.silentOn),
        [[], []],
      );

      // compute-1 heard on management only from now on; compute-2 heard nowhere.
      await reports.record('compute-1', { network: 'management', processes: running }, at(4));
      setNow(at(4.5));
      const findings = await watch.review();
      assert.deepEqual(findings, [
        { host: 'compute-1', heardOn: ['management'], silentOn: ['storage'], stoppedProcesses: [] },
      ]);
      assert.deepEqual(await gauge('lifeguard_host_agent_network_silent'), [
        { host: 'compute-1', network: 'storage', value: 1 },
      ]);
      await reports.record('compute-1', { network: 'management', processes: running }, at(5));
      setNow(at(5.5));
      await watch.review();
      assert.equal(lines.lines.filter((line) => line.includes('silent on network storage')).length, 1);

      await reports.record('compute-1', { network: 'storage', processes: running }, at(6));
      await reports.record('compute-1', { network: 'management', processes: running }, at(6));
      setNow(at(6.5));
      await watch.review();
      assert.deepEqual(await gauge('lifeguard_host_agent_network_silent'), []);
      assert.match(lines.text, /network storage of compute-1 heard again/);
      assert.deepEqual(
        published.map(({ type, data }) => [type, data]),
        [
          [
            'host.network.silent',
            {
              host: 'compute-1',
              network: 'storage',
              heardOn: ['management'],
              lastHeardAt: at(0).toISOString(),
            },
          ],
          ['host.network.heard', { host: 'compute-1', network: 'storage' }],
        ],
      );
      // Named by the last heartbeat heard on the network: another leader announcing it gives the same id.
      assert.equal(
        published[0]!.id,
        transitionEventId('host.network.silent', 'compute-1', 'storage', at(0).toISOString()),
      );
    } finally {
      await deleteKeysWithPrefix(redis, prefix);
    }
  });

  it('names a process a live host reports stopped, until it runs again, and announces it again when its event could not be published; clear() empties the gauges of a replica that stops leading', async () => {
    const { prefix, reports, watch, lines, gauge, setNow, published, refuse } = setUp();
    try {
      const stopped = { 'nova-compute': 'stopped', libvirtd: 'running' } as const;
      await reports.record('compute-3', { network: 'management', processes: stopped }, at(0));
      setNow(at(1));
      refuse(true);
      await watch.review();
      assert.match(lines.text, /host.process.stopped not published; trying again at the next review/);
      refuse(false);
      await watch.review();
      assert.deepEqual(published, [
        {
          type: 'host.process.stopped',
          data: { host: 'compute-3', process: 'nova-compute', reportedAt: at(0).toISOString() },
        },
      ]);
      assert.deepEqual(await gauge('lifeguard_host_agent_process_stopped'), [
        { host: 'compute-3', process: 'nova-compute', value: 1 },
      ]);
      assert.match(lines.text, /nova-compute reported stopped on compute-3/);
      watch.clear();
      assert.deepEqual(await gauge('lifeguard_host_agent_process_stopped'), []);

      await reports.record('compute-3', { network: 'management', processes: running }, at(2));
      setNow(at(2.5));
      await watch.review();
      assert.deepEqual(await gauge('lifeguard_host_agent_process_stopped'), []);
      // clear() forgot the announcement: a replica that leads again does not announce an end it did not see begin.
      assert.deepEqual(
        published.map(({ type }) => type),
        ['host.process.stopped'],
      );
    } finally {
      await deleteKeysWithPrefix(redis, prefix);
    }
  });

  it('an agent that dies while reporting a process stopped clears its gauge without saying the process runs again', async () => {
    const { prefix, reports, watch, lines, gauge, setNow, published } = setUp();
    try {
      const stopped = { 'nova-compute': 'stopped', libvirtd: 'running' } as const;
      await reports.record('compute-4', { network: 'management', processes: stopped }, at(0));
      setNow(at(1));
      await watch.review();
      assert.deepEqual(await gauge('lifeguard_host_agent_process_stopped'), [
        { host: 'compute-4', process: 'nova-compute', value: 1 },
      ]);
      // Nothing more heard from compute-4's agent: silent everywhere, left to the gates.
      setNow(at(10));
      await watch.review();
      assert.deepEqual(await gauge('lifeguard_host_agent_process_stopped'), []);
      assert.deepEqual(
        published.map(({ type }) => type),
        ['host.process.stopped'],
        'no host.process.running from an agent that said nothing',
      );
      assert.doesNotMatch(lines.text, /reported running again/);
      assert.match(lines.text, /nova-compute on compute-4: no longer reported .*not known to run/);
    } finally {
      await deleteKeysWithPrefix(redis, prefix);
    }
  });

  it('forgets hosts and networks not heard for 600 s; keeps the newest time when replicas record out of order', async () => {
    const { prefix, reports } = setUp();
    try {
      await reports.record('old-host', { network: 'legacy', processes: running }, at(0));
      await reports.record('compute-4', { network: 'management', processes: running }, at(700));
      await reports.record('compute-4', { network: 'management', processes: running }, at(650));
      await reports.prune(600, at(700));
      const snapshot = await reports.snapshot();
      assert.deepEqual([...snapshot.networks.keys()], ['management']);
      assert.deepEqual(snapshot.networks.get('management')!.get('compute-4'), at(700));
      assert.deepEqual([...snapshot.processes.keys()], ['compute-4']);
    } finally {
      await deleteKeysWithPrefix(redis, prefix);
    }
  });
});
