import { DEAD_LETTER_EXCHANGE, DEAD_LETTER_QUEUE, EVENTS_EXCHANGE, QUEUES } from '@lifeguard/contracts';
import type { Channel } from 'amqplib';

/** Declares topology on a fresh channel; runs at connect and after every reconnect. */
export type TopologyDeclaration = (channel: Channel) => Promise<void>;

/** Delivery limit of lifeguard's quorum queues: after this many redeliveries the broker dead-letters. */
export const WORK_QUEUE_DELIVERY_LIMIT = 20;

/**
 * Declares the dead-letter exchange (topic) and its quorum queue, bound to every routing key.
 * Every lifeguard connection declares it, so dead-lettering never fails for lack of a queue.
 */
export async function declareDeadLetterTopology(channel: Channel): Promise<void> {
  await channel.assertExchange(DEAD_LETTER_EXCHANGE, 'topic', { durable: true });
  await channel.assertQueue(DEAD_LETTER_QUEUE, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await channel.bindQueue(DEAD_LETTER_QUEUE, DEAD_LETTER_EXCHANGE, '#');
}

/**
 * Routing-key patterns the event journal keeps: the Instance HA events (`host.*`, `instance.*`,
 * `threshold.exceeded`, `admission.blocked`) operators' write actions (`operator.action`) and `redis.memory.lost`. High-rate provisioning events are not journalled; their
 * publisher declares the queues that consume them, so they are routable without the journal.
 */
export const EVENT_JOURNAL_BINDINGS: ReadonlyArray<string> = [
  'host.#',
  'instance.#',
  'threshold.#',
  'admission.#',
  'operator.#',
  'redis.#',
];

/**
 * Declares the events exchange (topic, durable) and the event journal: a bounded quorum queue
 * (100,000 messages, oldest dropped first) bound to EVENT_JOURNAL_BINDINGS, so every Instance HA event
 * is routable and confirmed publishes with `mandatory` never bounce, and operators can inspect them.
 */
export async function declareEventsTopology(channel: Channel): Promise<void> {
  await channel.assertExchange(EVENTS_EXCHANGE, 'topic', { durable: true });
  await channel.assertQueue(QUEUES.eventJournal, {
    durable: true,
    arguments: { 'x-queue-type': 'quorum', 'x-max-length': 100_000 },
  });
  // A journal declared by an earlier release was bound to every event.
  await channel.unbindQueue(QUEUES.eventJournal, EVENTS_EXCHANGE, '#');
  for (const pattern of EVENT_JOURNAL_BINDINGS)
    await channel.bindQueue(QUEUES.eventJournal, EVENTS_EXCHANGE, pattern);
}

/**
 * Declares one of lifeguard's durable work queues: a quorum queue whose poison messages are
 * dead-lettered by the broker after WORK_QUEUE_DELIVERY_LIMIT deliveries (at-least-once
 * dead-lettering, which needs `reject-publish` overflow), bound to `exchange` with each routing key.
 * `extraArguments` adds queue arguments, e.g. `{ 'x-single-active-consumer': true }` for a queue whose
 * messages must be handled in order by one consumer at a time.
 */
export async function declareWorkQueue(
  channel: Channel,
  queue: string,
  bindings: ReadonlyArray<{ exchange: string; routingKey: string }>,
  extraArguments: Readonly<Record<string, unknown>> = {},
): Promise<void> {
  await channel.assertQueue(queue, {
    durable: true,
    arguments: {
      'x-queue-type': 'quorum',
      'x-delivery-limit': WORK_QUEUE_DELIVERY_LIMIT,
      'x-dead-letter-exchange': DEAD_LETTER_EXCHANGE,
      'x-dead-letter-routing-key': queue,
      'x-dead-letter-strategy': 'at-least-once',
      'x-overflow': 'reject-publish',
      ...extraArguments,
    },
  });
  for (const binding of bindings) await channel.bindQueue(queue, binding.exchange, binding.routingKey);
}
