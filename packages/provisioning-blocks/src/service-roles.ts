// What each role of the provisioning service starts (see startProvisioning in service.ts): the
// oslo RPC server and the native consumers (role `service`), the port-status subscriber, the stuck-port
// reconciler and the Nova notifier (role `port-status`).
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
import type { ProvisioningMetrics } from './metrics.ts';
import type { AgentCallbacks } from './ml2/agent-callbacks.ts';
import { MECHANISM_DRIVERS } from './ml2/ml2-rules.ts';
import type { PortProvisioning } from './ml2/port-provisioning.ts';
import { CommandHandler } from './native/command-handler.ts';
import { NativeAgentHandler } from './native/native-agent-handler.ts';
import { StuckPortReconciler, type StuckPortReconcilerOptions } from './reconcile/stuck-port-reconciler.ts';
import { neutronRpcTopics } from './rpc/neutron-endpoints.ts';
import { OsloRpcServer } from './rpc/oslo-rpc-server.ts';
import { type ExternalEventsApi, NovaNotifier } from './status/nova-notifier.ts';
import { RedisNovaTold } from './status/nova-told.ts';
import { PortStatusSubscriber } from './status/port-status-subscriber.ts';
import type { AgentRegistry } from './store/agent-registry.ts';
import type { PortStore } from './store/port-store.ts';
import type { ProvisioningKeys } from './store/provisioning-keys.ts';
import type { RecordStore } from './store/record-store.ts';

/** The stores and handlers the roles share (built by startProvisioning). */
export interface ProvisioningParts {
  readonly redis: RedisClient;
  readonly keys: ProvisioningKeys;
  readonly metrics: ProvisioningMetrics;
  readonly ports: PortStore;
  readonly records: RecordStore;
  readonly agents: AgentRegistry;
  readonly portProvisioning: PortProvisioning;
  readonly callbacks: AgentCallbacks;
}

/** What the roles started so far: what stopping the provisioning service stops and closes. */
export interface StartedParts {
  rpcAmqp: AmqpClient | null;
  rpcServer: OsloRpcServer | null;
  subscriber: PortStatusSubscriber | null;
  notifier: NovaNotifier | null;
  reconciler: StuckPortReconciler | null;
  readonly consumers: Array<ManagedConsumer<never>>;
  /** The Redis connections the service opened for itself. */
  readonly ownRedis: RedisClient[];
}

/**
 * Role `service`: the oslo RPC server on the agents' vhost (its own connection when the RPC URL is
 * not the events URL), then the native command and agent message consumers.
 */
export async function startServiceRole(
  context: ServiceContext,
  configuration: ProvisioningConfiguration,
  parts: ProvisioningParts,
  started: StartedParts,
): Promise<void> {
  const { logger, config } = context;
  const { redis, keys, metrics, callbacks } = parts;
  const duplicateMemory = configuration.LIFEGUARD_PROVISIONING_DUPLICATE_MEMORY_SECONDS;
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
  if (rpcConnection !== context.amqp) started.rpcAmqp = rpcConnection;
  const rpcServer = new OsloRpcServer({
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
    missingReplyQueueRetrySeconds: configuration.LIFEGUARD_PROVISIONING_RPC_MISSING_REPLY_QUEUE_RETRY_SECONDS,
    logger: logger.child({ component: 'oslo-rpc-server' }),
    metrics,
  });
  started.rpcServer = rpcServer;
  await rpcServer.start();
  await consumeNativeQueues(context, configuration, parts, started);
}

/**
 * The native consumers: provisioning commands (one active consumer across replicas, so commands apply
 * in the order they were sent) and native agent messages.
 */
async function consumeNativeQueues(
  context: ServiceContext,
  configuration: ProvisioningConfiguration,
  parts: ProvisioningParts,
  started: StartedParts,
): Promise<void> {
  const { logger } = context;
  const { portProvisioning, records, agents, metrics, callbacks } = parts;
  const commands = new CommandHandler({ portProvisioning, records, agents, logger, metrics });
  started.consumers.push(
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
  started.consumers.push(
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

/**
 * Role `port-status`: the port-status subscriber, the stuck-port reconciler, and the Nova notifier
 * unless Nova notifications are off (LIFEGUARD_PROVISIONING_NOTIFY_NOVA_ON_PORT_STATUS_CHANGES=false,
 * or no cloud given: `compute` null), which the log says.
 */
export async function startPortStatusRole(
  context: ServiceContext,
  configuration: ProvisioningConfiguration,
  parts: ProvisioningParts,
  started: StartedParts,
  compute: ExternalEventsApi | null,
): Promise<void> {
  const { logger } = context;
  const { redis, keys, ports, agents, metrics } = parts;
  const duplicateMemory = configuration.LIFEGUARD_PROVISIONING_DUPLICATE_MEMORY_SECONDS;
  const subscriber = new PortStatusSubscriber({
    amqp: context.amqp,
    ports,
    logger: logger.child({ component: 'port-status' }),
    metrics,
    handledTtlSeconds: duplicateMemory,
    prefetch: configuration.LIFEGUARD_PROVISIONING_PORT_STATUS_PREFETCH,
  });
  started.subscriber = subscriber;
  await subscriber.start();
  started.reconciler = startReconciler(configuration, { redis, keys, ports, agents, logger, metrics });
  if (!configuration.LIFEGUARD_PROVISIONING_NOTIFY_NOVA_ON_PORT_STATUS_CHANGES) {
    logger.info(
      'Nova notifications are off (LIFEGUARD_PROVISIONING_NOTIFY_NOVA_ON_PORT_STATUS_CHANGES=false)',
    );
  } else if (!compute) {
    logger.warn('Nova notifications are off: no cloud was given (OS_CLOUD / clouds.yaml / OS_*)');
  } else {
    const notifier = new NovaNotifier({
      amqp: context.amqp,
      compute,
      logger: logger.child({ component: 'nova-notifier' }),
      metrics,
      prefetch: configuration.LIFEGUARD_PROVISIONING_NOVA_PREFETCH,
      sendEventsIntervalSeconds: configuration.LIFEGUARD_PROVISIONING_SEND_EVENTS_INTERVAL_SECONDS,
      maxAttempts: configuration.LIFEGUARD_PROVISIONING_NOVA_MAX_ATTEMPTS,
      told: new RedisNovaTold(redis, keys),
    });
    started.notifier = notifier;
    await notifier.start();
  }
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
