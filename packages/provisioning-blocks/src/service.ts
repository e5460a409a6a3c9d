import {
  NATIVE_AGENTS_EXCHANGE,
  NativeAgentMessage,
  PROVISIONING_COMMANDS_EXCHANGE,
  ProvisioningCommand,
  QUEUES,
} from '@lifeguard/contracts';
import {
  AmqpClient,
  declareWorkQueue,
  type ManagedConsumer,
  parseAmqpUrlList,
  type RedisClient,
  type ServiceContext,
} from '@lifeguard/runtime';
import { osloQueueOptions, type ProvisioningConfiguration, rpcAmqpUrl } from './configuration.ts';
import { createProvisioningMetrics, type ProvisioningMetrics } from './metrics.ts';
import { AgentCallbacks } from './ml2/agent-callbacks.ts';
import { MECHANISM_DRIVERS } from './ml2/ml2-rules.ts';
import { PortProvisioning } from './ml2/port-provisioning.ts';
import { CommandHandler } from './native/command-handler.ts';
import { NativeAgentHandler } from './native/native-agent-handler.ts';
import { StuckPortReconciler, type StuckPortReconcilerOptions } from './reconcile/stuck-port-reconciler.ts';
import { neutronRpcTopics } from './rpc/neutron-endpoints.ts';
import { OsloRpcServer } from './rpc/oslo-rpc-server.ts';
import {
  declareNovaPortNotificationsQueue,
  declareProvisioningCompleteQueue,
} from './status/event-queues.ts';
import { type ExternalEventsApi, NovaNotifier } from './status/nova-notifier.ts';
import { PortStatusSubscriber } from './status/port-status-subscriber.ts';
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
  const { logger, source, config } = context;
  // The hot path sends many concurrent commands: with auto-pipelining they leave in one write per tick.
  const redis = await context.connectRedis('default', 'provisioning', { enableAutoPipelining: true });
  const role = configuration.LIFEGUARD_PROVISIONING_ROLE;
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

  const ownRedis: RedisClient[] = [redis];
  const consumers: Array<ManagedConsumer<never>> = [];
  let rpcAmqp: AmqpClient | null = null;
  let rpcServer: OsloRpcServer | null = null;
  let subscriber: PortStatusSubscriber | null = null;
  let notifier: NovaNotifier | null = null;
  let reconciler: StuckPortReconciler | null = null;
  const duplicateMemory = configuration.LIFEGUARD_PROVISIONING_DUPLICATE_MEMORY_SECONDS;

  // The relay publishes completions and port status events with `mandatory`: the queues that consume
  // them exist from the start, so events wait there even before a subscriber first runs.
  await context.amqp.declare(async (channel) => {
    await declareProvisioningCompleteQueue(channel);
    await declareNovaPortNotificationsQueue(channel);
  });
  const blockingRedis = await context.connectRedis('worker', 'outbox-relay');
  ownRedis.push(blockingRedis);
  const relay = new OutboxRelay({
    redis,
    blockingRedis,
    keys,
    consumerName: config.LIFEGUARD_INSTANCE_NAME,
    publish: publishOutboxEntryTo(context.amqp),
    logger: logger.child({ component: 'outbox-relay' }),
    metrics,
    batchSize: configuration.LIFEGUARD_PROVISIONING_OUTBOX_BATCH_SIZE,
    claimIdleMilliseconds: configuration.LIFEGUARD_PROVISIONING_OUTBOX_CLAIM_IDLE_SECONDS * 1000,
  });

  const stop = async () => {
    await Promise.all([
      rpcServer?.stop(),
      subscriber?.stop(),
      notifier?.stop(),
      reconciler?.stop(),
      ...consumers.map((consumer) => consumer.stop()),
    ]);
    await relay.stop();
    await rpcAmqp?.close();
    for (const connection of ownRedis) await connection.quit().catch(() => connection.disconnect());
  };

  try {
    await relay.start();
    if (role === 'all' || role === 'service') {
      const url = rpcAmqpUrl(configuration, config.LIFEGUARD_AMQP_URL);
      const rpcConnection =
        url === parseAmqpUrlList(config.LIFEGUARD_AMQP_URL).join(',')
          ? context.amqp
          : await AmqpClient.connect({
              url,
              connectionName: `${context.service}:rpc:${config.LIFEGUARD_INSTANCE_NAME}`,
              service: context.service,
              logger,
            });
      if (rpcConnection !== context.amqp) rpcAmqp = rpcConnection;
      rpcServer = new OsloRpcServer({
        amqp: rpcConnection,
        redis,
        keys,
        exchange: configuration.LIFEGUARD_PROVISIONING_RPC_EXCHANGE,
        serverName: configuration.LIFEGUARD_PROVISIONING_RPC_SERVER,
        topics: neutronRpcTopics(callbacks, {
          pluginTopic: configuration.LIFEGUARD_PROVISIONING_RPC_PLUGIN_TOPIC,
          reportsTopic: configuration.LIFEGUARD_PROVISIONING_RPC_REPORTS_TOPIC,
        }),
        prefetch: configuration.LIFEGUARD_PROVISIONING_RPC_PREFETCH,
        queueOptions: osloQueueOptions(configuration),
        handledTtlSeconds: duplicateMemory,
        missingReplyQueueRetrySeconds:
          configuration.LIFEGUARD_PROVISIONING_RPC_MISSING_REPLY_QUEUE_RETRY_SECONDS,
        logger: logger.child({ component: 'oslo-rpc-server' }),
        metrics,
      });
      await rpcServer.start();

      const commands = new CommandHandler({ portProvisioning, records, agents, logger, metrics });
      consumers.push(
        (await context.amqp.consume({
          queue: QUEUES.provisioningCommands,
          prefetch: configuration.LIFEGUARD_PROVISIONING_COMMANDS_PREFETCH,
          contract: 'provisioning command',
          schema: ProvisioningCommand,
          declare: async (channel) => {
            await channel.assertExchange(PROVISIONING_COMMANDS_EXCHANGE, 'topic', { durable: true });
            await declareWorkQueue(
              channel,
              QUEUES.provisioningCommands,
              [{ exchange: PROVISIONING_COMMANDS_EXCHANGE, routingKey: '#' }],
              // One consumer at a time across replicas, so commands apply in the order they were sent.
              { 'x-single-active-consumer': true },
            );
          },
          handler: (command) => commands.handle(command),
        })) as unknown as ManagedConsumer<never>,
      );
      const nativeAgents = new NativeAgentHandler(callbacks, metrics);
      consumers.push(
        (await context.amqp.consume({
          queue: QUEUES.nativeAgents,
          prefetch: configuration.LIFEGUARD_PROVISIONING_AGENTS_PREFETCH,
          contract: 'native agent message',
          schema: NativeAgentMessage,
          declare: async (channel) => {
            await channel.assertExchange(NATIVE_AGENTS_EXCHANGE, 'topic', { durable: true });
            await declareWorkQueue(channel, QUEUES.nativeAgents, [
              { exchange: NATIVE_AGENTS_EXCHANGE, routingKey: '#' },
            ]);
          },
          handler: (message) => nativeAgents.handle(message),
        })) as unknown as ManagedConsumer<never>,
      );
    }

    if (role === 'all' || role === 'port-status') {
      subscriber = new PortStatusSubscriber({
        amqp: context.amqp,
        ports,
        logger: logger.child({ component: 'port-status' }),
        metrics,
        handledTtlSeconds: duplicateMemory,
        prefetch: configuration.LIFEGUARD_PROVISIONING_PORT_STATUS_PREFETCH,
      });
      await subscriber.start();
      reconciler = startReconciler(configuration, { redis, keys, ports, agents, logger, metrics });
      const compute = options.compute ?? null;
      if (!configuration.LIFEGUARD_PROVISIONING_NOTIFY_NOVA_ON_PORT_STATUS_CHANGES) {
        logger.info(
          'Nova notifications are off (LIFEGUARD_PROVISIONING_NOTIFY_NOVA_ON_PORT_STATUS_CHANGES=false)',
        );
      } else if (!compute) {
        logger.warn('Nova notifications are off: no cloud was given (OS_CLOUD / clouds.yaml / OS_*)');
      } else {
        notifier = new NovaNotifier({
          amqp: context.amqp,
          compute,
          logger: logger.child({ component: 'nova-notifier' }),
          metrics,
          prefetch: configuration.LIFEGUARD_PROVISIONING_NOVA_PREFETCH,
          sendEventsIntervalSeconds: configuration.LIFEGUARD_PROVISIONING_SEND_EVENTS_INTERVAL_SECONDS,
          maxAttempts: configuration.LIFEGUARD_PROVISIONING_NOVA_MAX_ATTEMPTS,
        });
        await notifier.start();
      }
    }
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }

  context.admin.addReadiness({ name: 'outbox-relay', check: () => relay.isRunning });
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

/**
 * Starts the stuck-port reconciler with the configured settings, or returns null when
 * LIFEGUARD_PROVISIONING_RECONCILE_INTERVAL_SECONDS is 0.
 */
function startReconciler(
  configuration: ProvisioningConfiguration,
  parts: Pick<StuckPortReconcilerOptions, 'redis' | 'keys' | 'ports' | 'agents' | 'logger' | 'metrics'>,
): StuckPortReconciler | null {
  const intervalSeconds = configuration.LIFEGUARD_PROVISIONING_RECONCILE_INTERVAL_SECONDS;
  if (intervalSeconds === 0) return null;
  const reconciler = new StuckPortReconciler({
    ...parts,
    logger: parts.logger.child({ component: 'stuck-ports' }),
    l2AgentTypes: configuration.LIFEGUARD_PROVISIONING_MECHANISM_DRIVERS.map(
      (name) => MECHANISM_DRIVERS[name]!.agentType,
    ),
    intervalSeconds,
    afterSeconds: configuration.LIFEGUARD_PROVISIONING_RECONCILE_AFTER_SECONDS,
    deadAgentSeconds: configuration.LIFEGUARD_PROVISIONING_RECONCILE_DEAD_AGENT_SECONDS,
  });
  reconciler.start();
  return reconciler;
}
