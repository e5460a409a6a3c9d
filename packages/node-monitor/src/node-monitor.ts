import { randomUUID } from 'node:crypto';
import { EVENTS_EXCHANGE, QUEUES } from '@lifeguard/contracts';
import {
  IncidentStore,
  type InstanceHaConfig,
  KdumpListener,
  KdumpStore,
  type LoadedInstanceHaConfig,
  logConfigWarnings,
} from '@lifeguard/instance-ha';
import type { ComputeApi, ImageApi } from '@lifeguard/openstack';
import {
  DeploymentGeneration,
  declareWorkQueue,
  LeaderLease,
  nodeMonitorLeaderKey,
  type ServiceContext,
} from '@lifeguard/runtime';
import { HeartbeatGate } from './admission/heartbeat-gate.ts';
import { EvacuabilityChecker } from './evacuability.ts';
import { loadHeartbeatKeys } from './heartbeat/heartbeat-keys.ts';
import { HeartbeatListener } from './heartbeat/heartbeat-listener.ts';
import { HeartbeatStore } from './heartbeat/heartbeat-store.ts';
import { RedisMemoryWatch } from './memory/redis-memory-watch.ts';
import { createNodeMonitorMetrics, type NodeMonitorMetrics } from './metrics.ts';
import { type CycleReport, PollCycle } from './poll-cycle.ts';
import { PollLoop } from './poll-loop.ts';
import type { NodeMonitorSettings } from './settings.ts';

export interface NodeMonitorOptions {
  /** The runtime's service context (config, logger, Redis, AMQP, events, admin server, shutdown). */
  context: ServiceContext;
  instanceHa: LoadedInstanceHaConfig;
  settings: NodeMonitorSettings;
  compute: ComputeApi;
  image: ImageApi | null;
  onCycle?: (report: CycleReport) => void;
}

/** A running node monitor. */
export interface RunningNodeMonitor {
  readonly lease: LeaderLease;
  readonly loop: PollLoop;
  readonly incidents: IncidentStore;
  readonly kdumpStore: KdumpStore;
  readonly kdumpListener: KdumpListener | null;
  readonly heartbeatListener: HeartbeatListener | null;
  readonly metrics: NodeMonitorMetrics;
  readonly config: InstanceHaConfig;
  stop(): Promise<void>;
}

/**
 * Starts the node monitor inside a started service: logs the configuration once (warnings, unknown
 * keys), declares the durable intake queues of `host.down` and `host.recovery.requested` (so events are
 * kept even before their consumers first start), contends for the leader lease (only the leader polls
 * and publishes; its fencing token travels with every event), starts the kdump and heartbeat listeners
 * on every replica (packets are shared through Redis), the poll loop, health checks and metrics.
 */
export async function startNodeMonitor(options: NodeMonitorOptions): Promise<RunningNodeMonitor> {
  const { context, settings, compute, image } = options;
  const { logger, redis, registry, admin } = context;
  const keyPrefix = context.redisSettings.keyPrefix;
  const loaded = options.instanceHa;
  const config = loaded.config;
  logConfigWarnings(logger, loaded.warnings);
  if (loaded.unknownKeys.length > 0) {
    logger.info(
      { keys: loaded.unknownKeys, path: loaded.path },
      'configuration: keys not used by lifeguard (accepted)',
    );
  }
  logger.info(
    {
      path: loaded.path,
      POLL: config.pollSeconds,
      DELTA: config.deltaSeconds,
      THRESHOLD: config.thresholdPercent,
      MAX_HOSTS_PER_CYCLE: config.maxHostsPerCycle,
      TAGGED_IMAGES: config.taggedImages,
      TAGGED_FLAVORS: config.taggedFlavors,
      TAGGED_AGGREGATES: config.taggedAggregates,
      CHECK_KDUMP: config.checkKdump,
      CHECK_HEARTBEAT: config.checkHeartbeat,
      DISABLED: config.disabled,
    },
    'node-monitor configuration',
  );
  await context.amqp.declare(async (channel) => {
    await declareWorkQueue(channel, QUEUES.hostDown, [
      { exchange: EVENTS_EXCHANGE, routingKey: 'host.down' },
    ]);
    await declareWorkQueue(channel, QUEUES.hostRecovery, [
      { exchange: EVENTS_EXCHANGE, routingKey: 'host.recovery.requested' },
    ]);
  });

  const metrics = createNodeMonitorMetrics(registry);
  const incidents = new IncidentStore(redis, keyPrefix);
  const kdumpStore = new KdumpStore(redis, keyPrefix);
  const lease = new LeaderLease(redis, {
    key: nodeMonitorLeaderKey(keyPrefix),
    // The instance name plus a per-process suffix: two processes given the same name (a restart
    // overlapping its predecessor, a copied env file) never both hold the lease.
    holder: `${context.config.LIFEGUARD_INSTANCE_NAME}#${randomUUID().slice(0, 8)}`,
    ttlMilliseconds: Math.round(settings.LIFEGUARD_NODE_MONITOR_LEASE_TTL_SECONDS * 1000),
    // Renew (and, as a standby, try to take over) five times per TTL: a standby leads at most
    // TTL + TTL/5 after the leader died.
    renewEveryMilliseconds: Math.max(
      50,
      Math.round((settings.LIFEGUARD_NODE_MONITOR_LEASE_TTL_SECONDS * 1000) / 5),
    ),
    logger,
  });

  let kdumpListener: KdumpListener | null = null;
  if (config.checkKdump) {
    kdumpListener = new KdumpListener({
      port: config.kdumpPort,
      host: settings.LIFEGUARD_KDUMP_LISTEN_ADDRESS,
      addressMap: config.kdumpAddressMap,
      store: kdumpStore,
      logger,
    });
    kdumpListener.on('packet', () => metrics.kdumpPackets.inc({ result: 'accepted' }));
    kdumpListener.on('garbage', ({ reason }: { reason: string }) =>
      metrics.kdumpPackets.inc({ result: reason }),
    );
    kdumpListener.on('unknown-source', () => metrics.kdumpPackets.inc({ result: 'unknown-source' }));
    await kdumpListener.start();
  }

  let heartbeatListener: HeartbeatListener | null = null;
  let heartbeatStore: HeartbeatStore | null = null;
  if (config.checkHeartbeat) {
    const { keys, problems } = loadHeartbeatKeys([
      settings.HEARTBEAT_HMAC_KEY_PATH,
      settings.HEARTBEAT_HMAC_KEY_PREVIOUS_PATH,
    ]);
    for (const problem of problems) logger.warn(problem, 'heartbeat HMAC key skipped');
    heartbeatStore = new HeartbeatStore(redis, keyPrefix);
    heartbeatListener = new HeartbeatListener({
      port: config.heartbeatPort,
      host: settings.LIFEGUARD_HEARTBEAT_LISTEN_ADDRESS,
      keys,
      store: heartbeatStore,
      logger,
    });
    heartbeatListener.on('rejected', ({ reason }: { reason: string }) =>
      metrics.heartbeatRejected.inc({ reason }),
    );
    await heartbeatListener.start();
  } else {
    logger.info("CHECK_HEARTBEAT is off (InstanceHA's default): Nova is the only failure signal");
  }

  const cycle = new PollCycle({
    compute,
    evacuability: new EvacuabilityChecker(compute, image, config, logger),
    kdump: kdumpStore,
    heartbeatGate: config.checkHeartbeat
      ? new HeartbeatGate({
          timeoutSeconds: config.heartbeatTimeoutSeconds,
          cliffThresholdPercent: config.heartbeatCliffThresholdPercent,
          cliffMaxCycles: config.heartbeatCliffMaxCycles,
        })
      : null,
    heartbeats:
      heartbeatStore && heartbeatListener
        ? async () => ({ last: await heartbeatStore.all(), listeningSince: heartbeatListener.startedAt })
        : null,
    config,
    incidents,
    events: context.events,
    leadership: lease,
    metrics,
    logger,
    memory: new RedisMemoryWatch({
      generation: new DeploymentGeneration(redis, keyPrefix),
      incidents,
      events: context.events,
      metrics,
      logger,
      deltaSeconds: config.deltaSeconds,
    }),
  });
  const loop = new PollLoop({
    runCycle: () => cycle.run(),
    isLeader: () => lease.isLeader,
    pollSeconds: config.pollSeconds,
    standbyCheckMilliseconds: Math.max(
      100,
      Math.round((settings.LIFEGUARD_NODE_MONITOR_LEASE_TTL_SECONDS * 1000) / 5),
    ),
    logger,
    metrics,
    onCycle: options.onCycle,
  });
  lease.on('acquired', (token: number) => {
    metrics.leader.set(1);
    logger.info({ fencingToken: token }, 'this node monitor now leads: polling');
    loop.wake();
  });
  lease.on('lost', () => {
    metrics.leader.set(0);
    logger.warn('this node monitor lost the leader lease: standing by');
  });
  lease.on('released', () => {
    metrics.leader.set(0);
    logger.info('this node monitor released the leader lease (stopping)');
  });
  admin.addReadiness({ name: 'poll-loop', check: () => loop.ready });
  admin.addLiveness({ name: 'poll-loop', check: () => loop.alive });
  lease.start();
  loop.start();

  let stopped = false;
  return {
    lease,
    loop,
    incidents,
    kdumpStore,
    kdumpListener,
    heartbeatListener,
    metrics,
    config,
    async stop() {
      if (stopped) return;
      stopped = true;
      await loop.stop();
      await lease.stop();
      await kdumpListener?.stop();
      await heartbeatListener?.stop();
    },
  };
}
