import { hostname } from 'node:os';
import { DEFAULT_AGENT_DOWN_TIME_SECONDS, NEUTRON_RPC } from '@lifeguard/contracts';
import {
  amqpUrlListSetting,
  booleanSetting,
  type ConfigSource,
  environmentSource,
  parseAmqpUrlList,
  parseConfig,
} from '@lifeguard/runtime';
import { z } from 'zod';
import { MECHANISM_DRIVERS } from './ml2/ml2-rules.ts';
import type { OsloQueueOptions } from './rpc/oslo-queue-arguments.ts';

const positiveInteger = z.coerce.number().int().positive();
const seconds = z.coerce.number().positive();

/** What a process runs: the RPC/native service, the port-status subscriber, or both. */
export const PROVISIONING_ROLES = ['all', 'service', 'port-status'] as const;
export type ProvisioningRole = (typeof PROVISIONING_ROLES)[number];

/**
 * The service name of a process in `role` (logs' `service`, the metrics' `service` label, events' and
 * dead letters' source, the worker registry): `port-status` for the port-status role, else
 * `provisioning-blocks`.
 */
export function provisioningServiceName(role: ProvisioningRole): 'provisioning-blocks' | 'port-status' {
  return role === 'port-status' ? 'port-status' : 'provisioning-blocks';
}

/**
 * The provisioning service's environment variables (besides the runtime's LIFEGUARD_*). Neutron's
 * own option names are given in each description where one exists.
 */
export const provisioningConfigurationSchema = z.object({
  /** all (default): RPC server, native consumers, outbox relay and port-status subscriber; service: all but the subscriber; port-status: the subscriber, the Nova notifier and an outbox relay. */
  LIFEGUARD_PROVISIONING_ROLE: z.enum(PROVISIONING_ROLES).default('all'),
  /**
   * AMQP URL of the agents' RabbitMQ (Neutron's transport_url): one URL, a comma-separated list, or
   * oslo's `rabbit://user:pass@h1:5672,user:pass@h2:5672/vhost`; default LIFEGUARD_AMQP_URL.
   */
  LIFEGUARD_PROVISIONING_RPC_AMQP_URL: amqpUrlListSetting.optional(),
  /** Replaces the vhost of the RPC AMQP URL (the vhost part of Neutron's transport_url). */
  LIFEGUARD_PROVISIONING_RPC_VHOST: z.string().min(1).optional(),
  /** Neutron's control_exchange. */
  LIFEGUARD_PROVISIONING_RPC_EXCHANGE: z.string().min(1).default(NEUTRON_RPC.controlExchange),
  /** The L2/DHCP agents' plugin topic (neutron topics.PLUGIN). */
  LIFEGUARD_PROVISIONING_RPC_PLUGIN_TOPIC: z.string().min(1).default(NEUTRON_RPC.pluginTopic),
  /** The agents' state-report topic (neutron topics.REPORTS). */
  LIFEGUARD_PROVISIONING_RPC_REPORTS_TOPIC: z.string().min(1).default(NEUTRON_RPC.reportsTopic),
  /** This server's name in `<topic>.<server>` queue names (Neutron's host); default the host name. */
  LIFEGUARD_PROVISIONING_RPC_SERVER: z.string().min(1).default(hostname()),
  /** Unacknowledged requests per RPC queue consumer. */
  LIFEGUARD_PROVISIONING_RPC_PREFETCH: positiveInteger.default(100),
  /** oslo's amqp_durable_queues: declare the control exchange and topic queues durable. */
  LIFEGUARD_PROVISIONING_RPC_DURABLE_QUEUES: booleanSetting.default(false),
  /**
   * oslo's rabbit_quorum_queue: the `<topic>` and `<topic>.<server>` queues are quorum queues, and
   * they and the control exchange are durable whatever LIFEGUARD_PROVISIONING_RPC_DURABLE_QUEUES says
   * (docs/oslo-messaging.md#quorum-queues).
   */
  LIFEGUARD_PROVISIONING_RPC_QUORUM_QUEUE: booleanSetting.default(false),
  /** oslo's rabbit_transient_quorum_queue: the fanout queues are durable quorum queues, their exchanges durable. */
  LIFEGUARD_PROVISIONING_RPC_TRANSIENT_QUORUM_QUEUE: booleanSetting.default(false),
  /** oslo's rabbit_quorum_delivery_limit: `x-delivery-limit` of the RPC quorum queues; 0 sets none. */
  LIFEGUARD_PROVISIONING_RPC_QUORUM_DELIVERY_LIMIT: z.coerce.number().int().min(0).default(0),
  /** oslo's rabbit_quorum_max_memory_length: `x-max-in-memory-length` of the RPC quorum queues; 0 sets none. */
  LIFEGUARD_PROVISIONING_RPC_QUORUM_MAX_MEMORY_LENGTH: z.coerce.number().int().min(0).default(0),
  /** oslo's rabbit_quorum_max_memory_bytes: `x-max-in-memory-bytes` of the RPC quorum queues; 0 sets none. */
  LIFEGUARD_PROVISIONING_RPC_QUORUM_MAX_MEMORY_BYTES: z.coerce.number().int().min(0).default(0),
  /** oslo's rabbit_transient_queues_ttl, in seconds: `x-expires` of the fanout queues; 0 disables. */
  LIFEGUARD_PROVISIONING_RPC_TRANSIENT_QUEUES_TTL_SECONDS: z.coerce.number().int().min(0).default(1800),
  /** oslo's kombu_missing_consumer_retry_timeout, in seconds: how long a reply to a missing reply queue is retried. */
  LIFEGUARD_PROVISIONING_RPC_MISSING_REPLY_QUEUE_RETRY_SECONDS: seconds.default(60),
  /** How long handled request ids (`_unique_id`) and event ids are remembered, in seconds. */
  LIFEGUARD_PROVISIONING_DUPLICATE_MEMORY_SECONDS: positiveInteger.default(3600),
  /** Neutron's agent_down_time, in seconds: an agent is alive while its last heartbeat is not older. */
  LIFEGUARD_PROVISIONING_AGENT_DOWN_TIME_SECONDS: positiveInteger.default(DEFAULT_AGENT_DOWN_TIME_SECONDS),
  /** Neutron's enable_new_agents: admin_state_up of newly registered agents. */
  LIFEGUARD_PROVISIONING_ENABLE_NEW_AGENTS: booleanSetting.default(true),
  /** Neutron's enable_traditional_dhcp: false turns the DHCP provisioning block off. */
  LIFEGUARD_PROVISIONING_ENABLE_TRADITIONAL_DHCP: booleanSetting.default(true),
  /** ML2's mechanism_drivers that add L2 blocks (comma-separated): openvswitch, linuxbridge, sriovnicswitch, macvtap. */
  LIFEGUARD_PROVISIONING_MECHANISM_DRIVERS: z
    .string()
    .default('openvswitch,linuxbridge,sriovnicswitch,macvtap')
    .transform((value) =>
      value
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean),
    )
    .refine((names) => names.every((name) => Object.hasOwn(MECHANISM_DRIVERS, name)), {
      message: `must be a comma-separated list of ${Object.keys(MECHANISM_DRIVERS).join(', ')}`,
    }),
  /** Unacknowledged native commands held at once. */
  LIFEGUARD_PROVISIONING_COMMANDS_PREFETCH: positiveInteger.default(100),
  /** Unacknowledged native agent messages held at once. */
  LIFEGUARD_PROVISIONING_AGENTS_PREFETCH: positiveInteger.default(100),
  /** Outbox entries published per relay round. */
  LIFEGUARD_PROVISIONING_OUTBOX_BATCH_SIZE: positiveInteger.default(256),
  /** A relay's unacknowledged outbox entries are taken over by another after this many seconds. */
  LIFEGUARD_PROVISIONING_OUTBOX_CLAIM_IDLE_SECONDS: seconds.default(30),
  /** Unacknowledged provisioning.complete events held by the port-status subscriber. */
  LIFEGUARD_PROVISIONING_PORT_STATUS_PREFETCH: positiveInteger.default(100),
  /** Seconds between stuck-port reconciler rounds (port-status role); 0 turns the reconciler off. */
  LIFEGUARD_PROVISIONING_RECONCILE_INTERVAL_SECONDS: z.coerce.number().min(0).default(60),
  /** Seconds a port may await ACTIVE after its last block went before the reconciler completes or reports it. */
  LIFEGUARD_PROVISIONING_RECONCILE_AFTER_SECONDS: z.coerce.number().min(0).default(60),
  /** Seconds an agent may be silent before the ports it blocks are reported as stuck. */
  LIFEGUARD_PROVISIONING_RECONCILE_DEAD_AGENT_SECONDS: seconds.default(300),
  /** Neutron's notify_nova_on_port_status_changes; when true the port-status role needs a cloud (OS_CLOUD / clouds.yaml / OS_*). */
  LIFEGUARD_PROVISIONING_NOTIFY_NOVA_ON_PORT_STATUS_CHANGES: booleanSetting.default(true),
  /** Neutron's send_events_interval, in seconds: Nova events gathered into one request. */
  LIFEGUARD_PROVISIONING_SEND_EVENTS_INTERVAL_SECONDS: z.coerce.number().min(0).default(2),
  /** Attempts per Nova request on connection failures, timeouts and 5xx before dead-lettering. */
  LIFEGUARD_PROVISIONING_NOVA_MAX_ATTEMPTS: positiveInteger.default(8),
  /** Unacknowledged port events held by the Nova notifier (they wait for Nova's answer). */
  LIFEGUARD_PROVISIONING_NOVA_PREFETCH: positiveInteger.default(500),
});
export type ProvisioningConfiguration = z.output<typeof provisioningConfigurationSchema>;

/**
 * Reads the provisioning configuration.
 * @throws ConfigError naming every invalid variable
 */
export function loadProvisioningConfiguration(
  sources: ReadonlyArray<ConfigSource> = [environmentSource()],
): ProvisioningConfiguration {
  return parseConfig(provisioningConfigurationSchema, sources);
}

/**
 * The AMQP address list of the agents' broker (comma-separated full URLs, see parseAmqpUrlList): the
 * RPC URL (or the main one) with every address's vhost replaced when LIFEGUARD_PROVISIONING_RPC_VHOST
 * is set.
 * @throws AmqpUrlListError when the URL cannot be read (the configuration schema refuses it first)
 */
export function rpcAmqpUrl(configuration: ProvisioningConfiguration, mainUrl: string): string {
  return parseAmqpUrlList(configuration.LIFEGUARD_PROVISIONING_RPC_AMQP_URL ?? mainUrl)
    .map((address) => {
      const url = new URL(address);
      if (configuration.LIFEGUARD_PROVISIONING_RPC_VHOST !== undefined) {
        url.pathname = `/${encodeURIComponent(configuration.LIFEGUARD_PROVISIONING_RPC_VHOST)}`;
      }
      return url.toString();
    })
    .join(',');
}

/** The oslo queue options of a configuration, as OsloRpcServer takes them (docs/oslo-messaging.md#quorum-queues). */
export function osloQueueOptions(configuration: ProvisioningConfiguration): OsloQueueOptions {
  return {
    durableQueues: configuration.LIFEGUARD_PROVISIONING_RPC_DURABLE_QUEUES,
    quorumQueue: configuration.LIFEGUARD_PROVISIONING_RPC_QUORUM_QUEUE,
    transientQuorumQueue: configuration.LIFEGUARD_PROVISIONING_RPC_TRANSIENT_QUORUM_QUEUE,
    quorumDeliveryLimit: configuration.LIFEGUARD_PROVISIONING_RPC_QUORUM_DELIVERY_LIMIT,
    quorumMaxMemoryLength: configuration.LIFEGUARD_PROVISIONING_RPC_QUORUM_MAX_MEMORY_LENGTH,
    quorumMaxMemoryBytes: configuration.LIFEGUARD_PROVISIONING_RPC_QUORUM_MAX_MEMORY_BYTES,
    transientQueueTtlSeconds: configuration.LIFEGUARD_PROVISIONING_RPC_TRANSIENT_QUEUES_TTL_SECONDS,
  };
}

/** Whether this configuration sends Nova notifications (and so needs the cloud configuration). */
export function notifiesNova(configuration: ProvisioningConfiguration): boolean {
  return (
    configuration.LIFEGUARD_PROVISIONING_ROLE !== 'service' &&
    configuration.LIFEGUARD_PROVISIONING_NOTIFY_NOVA_ON_PORT_STATUS_CHANGES
  );
}
