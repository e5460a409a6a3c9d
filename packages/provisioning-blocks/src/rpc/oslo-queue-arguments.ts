import { OSLO_TOPOLOGY } from '@lifeguard/contracts';
import type { Options } from 'amqplib';

/**
 * oslo.messaging's `[oslo_messaging_rabbit]` options that change how its RPC topology is declared
 * (docs/oslo-messaging.md#quorum-queues). Counts of 0 set no argument, as in oslo.
 */
export interface OsloQueueOptions {
  /** amqp_durable_queues. */
  durableQueues: boolean;
  /** rabbit_quorum_queue: the topic and server queues are quorum queues (and durable). */
  quorumQueue: boolean;
  /** rabbit_transient_quorum_queue: the fanout queues are quorum queues (and durable). */
  transientQuorumQueue: boolean;
  /** rabbit_quorum_delivery_limit (`x-delivery-limit`). */
  quorumDeliveryLimit: number;
  /** rabbit_quorum_max_memory_length (`x-max-in-memory-length`). */
  quorumMaxMemoryLength: number;
  /** rabbit_quorum_max_memory_bytes (`x-max-in-memory-bytes`). */
  quorumMaxMemoryBytes: number;
  /** rabbit_transient_queues_ttl in seconds (`x-expires` of the fanout queues; 0: none). */
  transientQueueTtlSeconds: number;
}

/** How each object of oslo's RPC topology is declared under `options`. */
export interface OsloDeclarations {
  controlExchange: Options.AssertExchange;
  /** `<topic>` and `<topic>.<server>`. */
  topicQueue: Options.AssertQueue;
  fanoutExchange: Options.AssertExchange;
  /** `<topic>_fanout_<32 hex>`. */
  fanoutQueue: Options.AssertQueue;
}

/**
 * The flags and arguments oslo.messaging's rabbit driver declares its RPC objects with, so a server
 * declaring the same objects is never refused with 406 PRECONDITION_FAILED
 * (docs/oslo-messaging.md#quorum-queues, from impl_rabbit.py's `_get_queue_arguments`, `durable`,
 * `declare_topic_consumer` and `declare_fanout_consumer`): rabbit_quorum_queue makes the control
 * exchange and the topic queues durable and the queues `x-queue-type: quorum`;
 * rabbit_transient_quorum_queue does the same for the fanout exchange and queues.
 */
export function osloDeclarations(options: OsloQueueOptions): OsloDeclarations {
  const quorumArguments: Record<string, unknown> = { 'x-queue-type': 'quorum' };
  if (options.quorumDeliveryLimit > 0) quorumArguments['x-delivery-limit'] = options.quorumDeliveryLimit;
  if (options.quorumMaxMemoryLength > 0)
    quorumArguments['x-max-in-memory-length'] = options.quorumMaxMemoryLength;
  if (options.quorumMaxMemoryBytes > 0)
    quorumArguments['x-max-in-memory-bytes'] = options.quorumMaxMemoryBytes;
  const durable = options.durableQueues || options.quorumQueue;
  return {
    controlExchange: { durable, autoDelete: false },
    topicQueue: {
      ...OSLO_TOPOLOGY.topicQueue,
      durable,
      arguments: options.quorumQueue ? { ...quorumArguments } : {},
    },
    fanoutExchange: {
      durable: options.transientQuorumQueue,
      autoDelete: OSLO_TOPOLOGY.fanoutExchange.autoDelete,
    },
    fanoutQueue: {
      durable: options.transientQuorumQueue,
      autoDelete: false,
      exclusive: false,
      arguments: {
        ...(options.transientQueueTtlSeconds > 0
          ? { 'x-expires': options.transientQueueTtlSeconds * 1000 }
          : {}),
        ...(options.transientQuorumQueue ? quorumArguments : {}),
      },
    },
  };
}

/** oslo.messaging's defaults: nothing durable, no quorum queues, fanout queues expire after 1800 s. */
export const DEFAULT_OSLO_QUEUE_OPTIONS: Readonly<OsloQueueOptions> = {
  durableQueues: false,
  quorumQueue: false,
  transientQuorumQueue: false,
  quorumDeliveryLimit: 0,
  quorumMaxMemoryLength: 0,
  quorumMaxMemoryBytes: 0,
  transientQueueTtlSeconds: 1800,
};
