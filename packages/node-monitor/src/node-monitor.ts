import { randomUUID } from 'node:crypto';
import { EVENTS_EXCHANGE, loadHeartbeatKeys, QUEUES } from '@lifeguard/contracts';
import {
  AdmissionSummaryStore,
  IncidentStore,
  type InstanceHaConfig,
  KdumpListener,
  KdumpStore,
  type LoadedInstanceHaConfig,
  logConfigWarnings,
  MassEventHoldStore,
  MonitorReportStore,
} from '@lifeguard/instance-ha';
import type { ComputeApi, ImageApi } from '@lifeguard/openstack';
import {
  DeploymentGeneration,
  declareWorkQueue,
  LeaderLease,
  nodeMonitorLeaderKey,
  type ServiceContext,
} from '@lifeguard/runtime';
import { EvacuabilityReader } from './admission/evacuability-reader.ts';
import { HeartbeatListener } from './heartbeat/heartbeat-listener.ts';
import { HeartbeatStore } from './heartbeat/heartbeat-store.ts';
import { HostAgentDetection } from './heartbeat/host-agent-detection.ts';
import { HostAgentReports } from './heartbeat/host-agent-reports.ts';
import { HostAgentWatch } from './heartbeat/host-agent-watch.ts';
import { SilenceTrigger } from './heartbeat/silence-trigger.ts';
import { RedisMemoryWatch } from './memory/redis-memory-watch.ts';
import { createNodeMonitorMetrics, type NodeMonitorMetrics } from './metrics.ts';
import { MonitorReportDetection, watchMonitorReports } from './monitor-reports/monitor-report-detection.ts';
import { type CycleReport, PollCycle } from './poll-cycle.ts';
import { followLeadership, recordFailedPolls } from './poll-leadership.ts';
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

/** Logs the configuration once: InstanceHA's warnings, keys lifeguard does not use, the keys it acts on. */
function logConfiguration(logger: ServiceContext['logger'], loaded: LoadedInstanceHaConfig): void {
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
      HEARTBEAT_DETECTION: config.heartbeatDetection,
      DISABLED: config.disabled,
      // lifeguard's own keys, as applied (0 in the file means DELTA ÷ 2 and 2 × DELTA)
      THRESHOLD_SUSPECT_AGE: config.thresholdSuspectAgeSeconds,
      MASS_EVENT_HOLD_DOWN: config.massEventHoldDownSeconds,
    },
    'node-monitor configuration',
  );
}

/**
 * The durable intake queues of `host.down` and `host.recovery.requested`, so that events are kept
 * even before their consumers first start.
 */
async function declareIntakeQueues(context: ServiceContext): Promise<void> {
  await context.amqp.declare(async (channel) => {
    await declareWorkQueue(channel, QUEUES.hostDown, [
      { exchange: EVENTS_EXCHANGE, routingKey: 'host.down' },
    ]);
    await declareWorkQueue(channel, QUEUES.hostRecovery, [
      { exchange: EVENTS_EXCHANGE, routingKey: 'host.recovery.requested' },
    ]);
  });
}

/** A fifth of the lease's time to live, in milliseconds (at least `floor`): how often a replica looks at the lease. */
function leaseLookMilliseconds(settings: NodeMonitorSettings, floor: number): number {
  return Math.max(floor, Math.round((settings.LIFEGUARD_NODE_MONITOR_LEASE_TTL_SECONDS * 1000) / 5));
}

/** The leader lease the replicas contend for; its fencing token travels with every event. */
function createLease(context: ServiceContext, settings: NodeMonitorSettings): LeaderLease {
  return new LeaderLease(context.redis, {
    key: nodeMonitorLeaderKey(context.redisSettings.keyPrefix),
    // The instance name plus a per-process suffix: two processes given the same name (a restart
    // overlapping its predecessor, a copied env file) never both hold the lease.
    holder: `${context.config.LIFEGUARD_INSTANCE_NAME}#${randomUUID().slice(0, 8)}`,
    ttlMilliseconds: Math.round(settings.LIFEGUARD_NODE_MONITOR_LEASE_TTL_SECONDS * 1000),
    // Renew (and, as a standby, try to take over) five times per TTL: a standby leads at most
    // TTL + TTL/5 after the leader died.
    renewEveryMilliseconds: leaseLookMilliseconds(settings, 50),
    logger: context.logger,
  });
}

/** The fence_kdump listener (CHECK_KDUMP), counting packets by result; null when kdump is not checked. */
async function startKdumpListener(parts: {
  config: InstanceHaConfig;
  settings: NodeMonitorSettings;
  store: KdumpStore;
  metrics: NodeMonitorMetrics;
  logger: ServiceContext['logger'];
}): Promise<KdumpListener | null> {
  const { config, metrics } = parts;
  if (!config.checkKdump) return null;
  const listener = new KdumpListener({
    port: config.kdumpPort,
    host: parts.settings.LIFEGUARD_KDUMP_LISTEN_ADDRESS,
    addressMap: config.kdumpAddressMap,
    store: parts.store,
    logger: parts.logger,
  });
  listener.on('packet', () => metrics.kdumpPackets.inc({ result: 'accepted' }));
  listener.on('garbage', ({ reason }: { reason: string }) => metrics.kdumpPackets.inc({ result: reason }));
  listener.on('unknown-source', () => metrics.kdumpPackets.inc({ result: 'unknown-source' }));
  await listener.start();
  return listener;
}

/** The heartbeat listener and its store (CHECK_HEARTBEAT), counting rejected packets; nulls when heartbeats are not checked. */
async function startHeartbeatListener(parts: {
  context: ServiceContext;
  config: InstanceHaConfig;
  settings: NodeMonitorSettings;
  metrics: NodeMonitorMetrics;
}): Promise<{
  listener: HeartbeatListener | null;
  store: HeartbeatStore | null;
  hostAgents: HostAgentReports | null;
}> {
  const { context, config, settings } = parts;
  const { logger } = context;
  if (!config.checkHeartbeat) {
    logger.info("CHECK_HEARTBEAT is off (InstanceHA's default): Nova is the only failure signal");
    return { listener: null, store: null, hostAgents: null };
  }
  const { keys, problems } = loadHeartbeatKeys([
    settings.HEARTBEAT_HMAC_KEY_PATH,
    settings.HEARTBEAT_HMAC_KEY_PREVIOUS_PATH,
  ]);
  for (const problem of problems) logger.warn(problem, 'heartbeat HMAC key skipped');
  const store = new HeartbeatStore(context.redis, context.redisSettings.keyPrefix);
  const hostAgents = new HostAgentReports(context.redis, context.redisSettings.keyPrefix);
  const listener = new HeartbeatListener({
    port: config.heartbeatPort,
    host: settings.LIFEGUARD_HEARTBEAT_LISTEN_ADDRESS,
    keys,
    store,
    hostAgents,
    logger,
  });
  listener.on('rejected', ({ reason }: { reason: string }) =>
    parts.metrics.heartbeatRejected.inc({ reason }),
  );
  listener.on('heartbeat', ({ host }: { host: string }) => parts.metrics.heartbeatAccepted.inc({ host }));
  await listener.start();
  return { listener, store, hostAgents };
}

/**
 * Reviews the host agents' reports every second while this replica leads (HostAgentWatch); a
 * replica that does not lead clears its gauges. @returns the function that stops it
 */
function watchHostAgents(
  reports: HostAgentReports,
  config: InstanceHaConfig,
  lease: LeaderLease,
  context: ServiceContext,
): () => void {
  const watch = new HostAgentWatch({
    reports,
    downAfterSeconds: config.heartbeatDownAfterSeconds,
    registry: context.registry,
    logger: context.logger,
    events: context.events,
  });
  let reviewing = false;
  const timer = setInterval(() => {
    if (!lease.isLeader) return watch.clear();
    if (reviewing) return;
    reviewing = true;
    watch
      .review()
      .catch((error: unknown) => context.logger.warn({ err: error }, 'host agent reports could not be read'))
      .finally(() => {
        reviewing = false;
      });
  }, 1000);
  return () => clearInterval(timer);
}

/** HEARTBEAT_DETECTION's trigger (SilenceTrigger), started; null without HEARTBEAT_DETECTION. */
function startSilenceTrigger(parts: {
  config: InstanceHaConfig;
  heartbeat: { listener: HeartbeatListener | null; hostAgents: HostAgentReports | null };
  lease: LeaderLease;
  loop: PollLoop;
  logger: ServiceContext['logger'];
}): SilenceTrigger | null {
  const { config, heartbeat, lease, loop } = parts;
  const { listener, hostAgents } = heartbeat;
  if (!config.heartbeatDetection || !listener || !hostAgents) return null;
  const trigger = new SilenceTrigger({
    read: () => hostAgents.snapshot(),
    listeningSince: () => listener.startedAt,
    isLeader: () => lease.isLeader,
    pollSoon: () => loop.pollSoon(),
    downAfterSeconds: config.heartbeatDownAfterSeconds,
    recentSeconds: config.heartbeatTimeoutSeconds,
    logger: parts.logger,
  });
  trigger.start();
  return trigger;
}

/** The poll cycle with its gates' inputs: evacuability, kdump, heartbeats, incidents, the Redis memory watch. */
function createPollCycle(parts: {
  options: NodeMonitorOptions;
  admissionSummaries: AdmissionSummaryStore;
  massEventHolds: MassEventHoldStore;
  incidents: IncidentStore;
  kdumpStore: KdumpStore;
  heartbeat: {
    listener: HeartbeatListener | null;
    store: HeartbeatStore | null;
    hostAgents: HostAgentReports | null;
  };
  lease: LeaderLease;
  metrics: NodeMonitorMetrics;
  hostAgentDetection: HostAgentDetection;
}): PollCycle {
  const { options, incidents, metrics } = parts;
  const { context, compute } = options;
  const { config } = options.instanceHa;
  const { listener, store } = parts.heartbeat;
  return new PollCycle({
    compute,
    evacuability: new EvacuabilityReader(compute, options.image, config, context.logger),
    kdump: parts.kdumpStore,
    heartbeats:
      store && listener
        ? async () => {
            const [last, hostAgents] = await Promise.all([
              store.all(),
              config.heartbeatDetection && parts.heartbeat.hostAgents
                ? parts.heartbeat.hostAgents.snapshot()
                : null,
            ]);
            return { last, listeningSince: listener.startedAt, hostAgents };
          }
        : null,
    hostAgentDetection: parts.hostAgentDetection,
    monitorReports: new MonitorReportDetection({
      store: new MonitorReportStore(context.redis, context.redisSettings.keyPrefix),
      config,
      logger: context.logger,
    }),
    config,
    incidents,
    events: context.events,
    leadership: parts.lease,
    metrics,
    logger: context.logger,
    admissionSummaries: parts.admissionSummaries,
    massEventHolds: parts.massEventHolds,
    memory: new RedisMemoryWatch({
      generation: new DeploymentGeneration(context.redis, context.redisSettings.keyPrefix),
      incidents,
      events: context.events,
      metrics,
      logger: context.logger,
      deltaSeconds: config.deltaSeconds,
      reaffirmLeadership: () => parts.lease.tryAcquire(),
    }),
  });
}

/**
 * Starts the node monitor inside a started service: logs the configuration once (warnings, unknown
 * keys), declares the durable intake queues of `host.down` and `host.recovery.requested` (so events are
 * kept even before their consumers first start), contends for the leader lease (only the leader polls
 * and publishes; its fencing token travels with every event), starts the kdump and heartbeat listeners
 * on every replica (packets are shared through Redis), the poll loop, health checks and metrics.
 */
export async function startNodeMonitor(options: NodeMonitorOptions): Promise<RunningNodeMonitor> {
  const { context, settings } = options;
  const { logger, redis, admin } = context;
  const keyPrefix = context.redisSettings.keyPrefix;
  const config = options.instanceHa.config;
  logConfiguration(logger, options.instanceHa);
  await declareIntakeQueues(context);

  const metrics = createNodeMonitorMetrics(context.registry);
  const incidents = new IncidentStore(redis, keyPrefix);
  const kdumpStore = new KdumpStore(redis, keyPrefix);
  const lease = createLease(context, settings);
  const kdumpListener = await startKdumpListener({ config, settings, store: kdumpStore, metrics, logger });
  const heartbeat = await startHeartbeatListener({ context, config, settings, metrics });
  const hostAgentDetection = new HostAgentDetection({
    config: options.instanceHa.config,
    compute: options.compute,
    events: options.context.events,
    logger: options.context.logger,
    registry: options.context.registry,
  });
  const admissionSummaries = new AdmissionSummaryStore(redis, keyPrefix);
  const cycle = createPollCycle({
    options,
    admissionSummaries,
    massEventHolds: new MassEventHoldStore(redis, keyPrefix),
    incidents,
    kdumpStore,
    heartbeat,
    lease,
    metrics,
    hostAgentDetection,
  });
  const loop = new PollLoop({
    runCycle: (deadline) => cycle.run(deadline),
    isLeader: () => lease.isLeader,
    pollSeconds: config.pollSeconds,
    standbyCheckMilliseconds: leaseLookMilliseconds(settings, 100),
    logger,
    metrics,
    onCycle: options.onCycle,
    onFailure: recordFailedPolls(admissionSummaries, config.pollSeconds, logger),
  });
  followLeadership(lease, loop, metrics, logger);
  admin.addReadiness({ name: 'poll-loop', check: () => loop.ready });
  admin.addLiveness({ name: 'poll-loop', check: () => loop.alive });
  lease.start();
  loop.start();
  const stopWatchingHostAgents = heartbeat.hostAgents
    ? watchHostAgents(heartbeat.hostAgents, config, lease, context)
    : () => undefined;
  const silenceTrigger = startSilenceTrigger({ config, heartbeat, lease, loop, logger });
  const stopReports = watchMonitorReports(new MonitorReportStore(redis, keyPrefix), lease, loop, logger);

  let stopped = false;
  return {
    lease,
    loop,
    incidents,
    kdumpStore,
    kdumpListener,
    heartbeatListener: heartbeat.listener,
    metrics,
    config,
    async stop() {
      if (stopped) return;
      stopped = true;
      stopWatchingHostAgents();
      silenceTrigger?.stop();
      stopReports();
      await loop.stop();
      // A compute service disabled or enabled beside the last poll: its call ends (the client's own
      // timeout bounds it) before the lease is given up.
      await hostAgentDetection.settled();
      await lease.stop();
      await kdumpListener?.stop();
      await heartbeat.listener?.stop();
    },
  };
}
