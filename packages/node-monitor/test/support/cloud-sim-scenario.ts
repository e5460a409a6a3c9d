import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CloudSim, startCloudSim } from '@lifeguard/cloud-sim';
import type { EventData, LifeguardEventType } from '@lifeguard/contracts';
import {
  AdmissionSummaryStore,
  IncidentStore,
  type InstanceHaConfig,
  KdumpStore,
  loadInstanceHaConfig,
} from '@lifeguard/instance-ha';
import { type ComputeApi, createOpenStackClients } from '@lifeguard/openstack';
import { createLogger, createMetricsRegistry } from '@lifeguard/runtime';
import { CapturedLines, deleteKeysWithPrefix, randomKeyPrefix, testRedis, waitFor } from '@lifeguard/testing';
import type { Redis } from 'ioredis';
import {
  type CycleReport,
  createNodeMonitorMetrics,
  EvacuabilityReader,
  HeartbeatStore,
  type NodeMonitorMetrics,
  PollCycle,
} from '../../src/index.ts';

export interface PublishedEvent {
  type: LifeguardEventType;
  data: Record<string, unknown>;
}

/**
 * One poll cycle wired to an in-process cloud-sim, the real Redis and an event list: the gate chain
 * end to end through Nova's HTTP API, without the timing of a real poll loop. A killed host turns
 * `down` after `serviceDownTimeSeconds` (1 s); healthy hosts report every 0.2 s.
 */
export interface Scenario {
  readonly sim: CloudSim;
  /** Nova's Compute API client of the scenario (for reads beside the cycle's). */
  readonly compute: ComputeApi;
  readonly cycle: PollCycle;
  readonly config: InstanceHaConfig;
  readonly events: PublishedEvent[];
  readonly logs: CapturedLines;
  readonly incidents: IncidentStore;
  readonly metrics: NodeMonitorMetrics;
  readonly redis: Redis;
  /** The heartbeat store (CHECK_HEARTBEAT scenarios; the listener is taken to run for an hour). */
  readonly heartbeats: HeartbeatStore;
  /** The kdump store (CHECK_KDUMP scenarios: packets and wait clocks). */
  readonly kdump: KdumpStore;
  /** The Redis key prefix of this scenario. */
  readonly prefix: string;
  /** Where each cycle keeps its admission summary (what `lifeguard status` shows). */
  readonly admissionSummaries: AdmissionSummaryStore;
  run(): Promise<CycleReport>;
  /** Kills hosts and waits until Nova reports them down. */
  kill(...hosts: string[]): Promise<void>;
  published<Type extends LifeguardEventType>(type: Type): Array<EventData<Type>>;
  hostDowns(): string[];
  close(): Promise<void>;
}

export async function scenario(options: {
  hosts: number | string[];
  /** Servers per host (default 1 each). */
  serversPerHost?: number;
  config?: Record<string, string | number | boolean>;
  token?: number;
  /** Nova's service_down_time in the simulated cloud (default 1 s). */
  serviceDownTimeSeconds?: number;
  /** The cycle's clock (default: the system clock). */
  now?: () => Date;
  /** The simulated cloud follows `now` too (its reports and service states), not the system clock. */
  cloudFollowsClock?: boolean;
}): Promise<Scenario> {
  const clock = options.now;
  const sim = await startCloudSim({
    hosts: options.hosts,
    servers: 0,
    redfishPort: false,
    ...(options.cloudFollowsClock && clock ? { now: () => clock().getTime() } : {}),
    model: { reportIntervalSeconds: 0.2, serviceDownTimeSeconds: options.serviceDownTimeSeconds ?? 1 },
  });
  const perHost = options.serversPerHost ?? 1;
  for (const host of sim.model.hosts.keys()) {
    for (let index = 0; index < perHost; index++) sim.model.addServer({ host, name: `${host}-vm${index}` });
  }
  const directory = mkdtempSync(join(tmpdir(), 'monitor-scenario-'));
  const values = { POLL: 1, DELTA: 300, TAGGED_AGGREGATES: false, ...options.config };
  writeFileSync(
    join(directory, 'config.yaml'),
    `config:\n${Object.entries(values)
      .map(([key, value]) => `  ${key}: ${JSON.stringify(String(value))}`)
      .join('\n')}\n`,
  );
  const { config } = loadInstanceHaConfig({
    path: join(directory, 'config.yaml'),
    env: {},
    allowBelowMinimum: true,
  });
  const logs = new CapturedLines();
  const logger = createLogger({ service: 'node-monitor', level: 'debug', destination: logs });
  const clients = createOpenStackClients({
    env: {
      OS_AUTH_TYPE: 'admin_token',
      OS_TOKEN: 'admin:admin',
      OS_ENDPOINT: sim.urls.compute,
      OS_IMAGE_ENDPOINT_OVERRIDE: sim.urls.image,
    },
    searchDirectories: [],
    logger,
  });
  const redis = testRedis();
  const prefix = randomKeyPrefix('scenario');
  const incidents = new IncidentStore(redis, prefix);
  const events: PublishedEvent[] = [];
  const metrics = createNodeMonitorMetrics(createMetricsRegistry('node-monitor'));
  const heartbeats = new HeartbeatStore(redis, prefix);
  const listeningSince = new Date(Date.now() - 3_600_000);
  const kdump = new KdumpStore(redis, prefix);
  const admissionSummaries = new AdmissionSummaryStore(redis, prefix);
  const cycle = new PollCycle({
    admissionSummaries,
    compute: clients.compute,
    evacuability: new EvacuabilityReader(clients.compute, clients.image, config, logger),
    kdump,
    ...(options.now ? { now: options.now } : {}),
    heartbeats: config.checkHeartbeat ? async () => ({ last: await heartbeats.all(), listeningSince }) : null,
    config,
    incidents,
    events: {
      publish: async (type, data) => {
        events.push({ type, data: data as Record<string, unknown> });
      },
    },
    leadership: { token: options.token ?? 1 },
    metrics,
    logger,
  });
  return {
    sim,
    compute: clients.compute,
    cycle,
    config,
    events,
    logs,
    incidents,
    metrics,
    redis,
    heartbeats,
    kdump,
    prefix,
    admissionSummaries,
    run: () => cycle.run(),
    kill: async (...hosts) => {
      for (const host of hosts) sim.killHost(host);
      await waitFor(
        `${hosts.join(', ')} down`,
        () => hosts.every((host) => !sim.model.serviceIsUp(sim.model.host(host))),
        10_000,
        20,
      );
    },
    published: (type) => events.filter((event) => event.type === type).map((event) => event.data) as never,
    hostDowns: () =>
      events.filter((event) => event.type === 'host.down').map((event) => String(event.data.host)),
    close: async () => {
      await sim.close();
      await deleteKeysWithPrefix(redis, prefix);
      await redis.quit();
    },
  };
}
