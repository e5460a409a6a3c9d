import { closeRedisClient, type RedisClient, type ServiceContext } from '@lifeguard/runtime';
import type { ProvisioningConfiguration } from './configuration.ts';
import { createProvisioningMetrics, type ProvisioningMetrics } from './metrics.ts';
import { AgentCallbacks } from './ml2/agent-callbacks.ts';
import { MECHANISM_DRIVERS } from './ml2/ml2-rules.ts';
import { PortProvisioning } from './ml2/port-provisioning.ts';
import type { OsloRpcServer } from './rpc/oslo-rpc-server.ts';
import {
  type ProvisioningParts,
  type StartedParts,
  startPortStatusRole,
  startServiceRole,
} from './service-roles.ts';
import {
  declareNovaPortNotificationsQueue,
  declareProvisioningCompleteQueue,
} from './status/event-queues.ts';
import type { ExternalEventsApi, NovaNotifier } from './status/nova-notifier.ts';
import type { PortStatusSubscriber } from './status/port-status-subscriber.ts';
import { AgentRegistry } from './store/agent-registry.ts';
import { BlockStore } from './store/block-store.ts';
import { OutboxRelay, publishOutboxEntryTo } from './store/outbox-relay.ts';
import { PortStore } from './store/port-store.ts';
import { ProvisioningKeys } from './store/provisioning-keys.ts';
import { RecordStore } from './store/record-store.ts';

/** The running parts of a provisioning process (what its role started). */
export interface Provisioning {
  readonly keys: ProvisioningKeys;
  readonly metrics: ProvisioningMetrics;
  readonly blocks: BlockStore;
  readonly ports: PortStore;
  readonly records: RecordStore;
  readonly agents: AgentRegistry;
  readonly portProvisioning: PortProvisioning;
  readonly callbacks: AgentCallbacks;
  readonly relay: OutboxRelay;
  readonly rpcServer: OsloRpcServer | null;
  readonly subscriber: PortStatusSubscriber | null;
  readonly notifier: NovaNotifier | null;
  /** Stops consuming (waiting for work in flight), then the relay, then closes own connections. */
  stop(): Promise<void>;
}

export interface StartProvisioningOptions {
  /**
   * The Compute API the Nova notifier calls (a NovaClient from @lifeguard/openstack). Without one
   * the port-status role runs with Nova notifications off, and says so in the log.
   */
  compute?: ExternalEventsApi | null;
  /** The service start time in milliseconds (stale report_state cut-off); default now. */
  startedAtMilliseconds?: number;
}

/**
 * Starts the parts of the provisioning service its role asks for, on a started ServiceContext, and
 * registers their shutdown (stop consuming and finish work in flight, stop the relay, close own
 * connections) before the context closes the brokers.
 *
 * - role `service` (or `all`): the oslo RPC server on the agents' vhost, the native command and agent
 *   message consumers, the outbox relay;
 * - role `port-status` (or `all`): the port-status subscriber, the Nova notifier, the outbox relay.
 */
export async function startProvisioning(
  context: ServiceContext,
  configuration: ProvisioningConfiguration,
  options: StartProvisioningOptions = {},
): Promise<Provisioning> {
  const { logger } = context;
  // The hot path sends many concurrent commands: with auto-pipelining they leave in one write per tick.
  const redis = await context.connectRedis('default', 'provisioning', { enableAutoPipelining: true });
  const role = configuration.LIFEGUARD_PROVISIONING_ROLE;
  const parts = createParts(context, redis, configuration, options);
  const { keys, metrics } = parts;
  const started: StartedParts = {
    rpcAmqp: null,
    rpcServer: null,
    subscriber: null,
    notifier: null,
    reconciler: null,
    consumers: [],
    ownRedis: [redis],
  };

  const relay = await createRelay(context, configuration, parts, started);

  const stop = () => stopStarted(started, relay);

  try {
    await relay.start();
    if (role === 'all' || role === 'service') await startServiceRole(context, configuration, parts, started);
    if (role === 'all' || role === 'port-status') {
      await startPortStatusRole(context, configuration, parts, started, options.compute ?? null);
    }
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }

  context.admin.addReadiness({ name: 'outbox-relay', check: () => relay.isRunning });
  const { rpcServer, subscriber, notifier } = started;
  if (rpcServer) {
    const server = rpcServer;
    context.admin.addReadiness({ name: 'oslo-rpc', check: () => server.isConsuming });
  }
  context.shutdown.add('stop provisioning', stop);
  logger.info(
    {
      role,
      exchange: configuration.LIFEGUARD_PROVISIONING_RPC_EXCHANGE,
      topics: rpcServer?.queues.map((each) => each.queue) ?? [],
      novaNotifications: notifier !== null,
    },
    'provisioning started',
  );
  const { blocks, ports, records, agents, portProvisioning, callbacks } = parts;
  return {
    keys,
    metrics,
    blocks,
    ports,
    records,
    agents,
    portProvisioning,
    callbacks,
    relay,
    rpcServer,
    subscriber,
    notifier,
    stop,
  };
}

/** The stores, the agent registry and the ML2 handlers the roles share, on the service's Redis connection. */
function createParts(
  context: ServiceContext,
  redis: RedisClient,
  configuration: ProvisioningConfiguration,
  options: StartProvisioningOptions,
): ProvisioningParts & { readonly blocks: BlockStore } {
  const { logger, source } = context;
  const metrics = createProvisioningMetrics(context.registry);
  const keys = new ProvisioningKeys(context.redisSettings.keyPrefix);
  const blocks = new BlockStore(redis, keys, source, metrics);
  const ports = new PortStore(redis, keys, source);
  const records = new RecordStore(redis, keys);
  const agents = new AgentRegistry({
    redis,
    keys,
    records,
    logger,
    metrics,
    agentDownTimeSeconds: configuration.LIFEGUARD_PROVISIONING_AGENT_DOWN_TIME_SECONDS,
    enableNewAgents: configuration.LIFEGUARD_PROVISIONING_ENABLE_NEW_AGENTS,
    startedAtMilliseconds: options.startedAtMilliseconds ?? Date.now(),
  });
  const portProvisioning = new PortProvisioning({
    ports,
    records,
    agents,
    source,
    logger,
    metrics,
    enableTraditionalDhcp: configuration.LIFEGUARD_PROVISIONING_ENABLE_TRADITIONAL_DHCP,
    mechanismDrivers: configuration.LIFEGUARD_PROVISIONING_MECHANISM_DRIVERS.map(
      (name) => MECHANISM_DRIVERS[name]!,
    ),
  });
  const callbacks = new AgentCallbacks({ redis, keys, blocks, ports, agents, source, logger, metrics });

  return { redis, keys, metrics, blocks, ports, records, agents, portProvisioning, callbacks };
}

/**
 * The outbox relay (not started) on a blocking Redis connection of its own, after declaring the queues
 * its events go to.
 */
async function createRelay(
  context: ServiceContext,
  configuration: ProvisioningConfiguration,
  parts: ProvisioningParts,
  started: StartedParts,
): Promise<OutboxRelay> {
  const { logger, config } = context;
  // The relay publishes completions and port status events with `mandatory`: the queues that consume
  // them exist from the start, so events wait there even before a subscriber first runs.
  await context.amqp.declare(async (channel) => {
    await declareProvisioningCompleteQueue(channel);
    await declareNovaPortNotificationsQueue(channel);
  });
  const blockingRedis = await context.connectRedis('worker', 'outbox-relay');
  started.ownRedis.push(blockingRedis);
  const relay = new OutboxRelay({
    redis: parts.redis,
    blockingRedis,
    keys: parts.keys,
    consumerName: config.LIFEGUARD_INSTANCE_NAME,
    publish: publishOutboxEntryTo(context.amqp),
    logger: logger.child({ component: 'outbox-relay' }),
    metrics: parts.metrics,
    batchSize: configuration.LIFEGUARD_PROVISIONING_OUTBOX_BATCH_SIZE,
    claimIdleMilliseconds: configuration.LIFEGUARD_PROVISIONING_OUTBOX_CLAIM_IDLE_SECONDS * 1000,
  });
  return relay;
}

/** Stops consuming (waiting for work in flight), then the relay, then closes own connections. */
async function stopStarted(started: StartedParts, relay: OutboxRelay): Promise<void> {
  await Promise.all([
    started.rpcServer?.stop(),
    started.subscriber?.stop(),
    started.notifier?.stop(),
    started.reconciler?.stop(),
    ...started.consumers.map((consumer) => consumer.stop()),
  ]);
  await relay.stop();
  await started.rpcAmqp?.close();
  for (const connection of started.ownRedis) await closeRedisClient(connection);
}
