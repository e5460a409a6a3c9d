/**
 * How oslo.messaging's rabbit driver declares its RPC topology with default options
 * (`amqp_durable_queues=false`, `amqp_auto_delete=false`, `rabbit_transient_queues_ttl=1800`).
 * A foreign RPC server must declare with the same flags, or RabbitMQ refuses the declaration with
 * 406 PRECONDITION_FAILED. Source: docs/oslo-messaging.md#topology and fixtures/oslo/00_topology.json.
 */
export const OSLO_TOPOLOGY = {
  /** The control exchange (`neutron`): topic, not durable, not auto-delete. */
  controlExchange: { type: 'topic', durable: false, autoDelete: false },
  /** `<topic>` and `<topic>.<server>` queues: not durable, not auto-delete, not exclusive, no arguments. */
  topicQueue: { durable: false, autoDelete: false, exclusive: false, arguments: {} },
  /** `<topic>_fanout` exchange: fanout, not durable, auto-delete. */
  fanoutExchange: { type: 'fanout', durable: false, autoDelete: true },
  /** `<topic>_fanout_<32 hex>` and `reply_<32 hex>` queues: expire 30 minutes after their last use. */
  transientQueue: {
    durable: false,
    autoDelete: false,
    exclusive: false,
    arguments: { 'x-expires': 1_800_000 },
  },
} as const;

/** Routing key and queue name of the per-server queue of a topic (`q-plugin.<server>`). */
export const osloServerQueue = (topic: string, server: string): string => `${topic}.${server}`;
/** Name of a topic's fanout exchange (`q-plugin_fanout`). */
export const osloFanoutExchange = (topic: string): string => `${topic}_fanout`;
