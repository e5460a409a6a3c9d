import { EVENTS_EXCHANGE } from '@lifeguard/contracts';
import { declareEventsTopology } from '@lifeguard/runtime';
import amqp from 'amqplib';

/** A provisioning.complete event as the fault tests count it. */
export interface CompletionEvent {
  readonly id: string;
  readonly portId: string;
}

/**
 * Keeps every `provisioning.complete.port` event in a durable quorum queue of its own, bound before the
 * first completion, so that events survive a RabbitMQ restart and a consumer of the test that was
 * away: the count is taken at the end by draining the queue.
 */
export class CompletionRecorder {
  private constructor(
    private readonly url: string,
    private readonly queue: string,
  ) {}

  /** Declares the events topology and the recorder's queue `queue` on the vhost at `url`. */
  static async start(url: string, queue: string): Promise<CompletionRecorder> {
    const connection = await amqp.connect(url);
    try {
      const channel = await connection.createChannel();
      await declareEventsTopology(channel);
      await channel.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
      await channel.bindQueue(queue, EVENTS_EXCHANGE, 'provisioning.complete.port');
    } finally {
      await connection.close();
    }
    return new CompletionRecorder(url, queue);
  }

  /**
   * Takes every event from the queue until it has been empty for `idleMilliseconds`, and returns
   * them in arrival order (each message acknowledged once read).
   */
  async drain(idleMilliseconds = 3000): Promise<CompletionEvent[]> {
    const connection = await amqp.connect(this.url);
    const events: CompletionEvent[] = [];
    try {
      const channel = await connection.createChannel();
      await channel.prefetch(1000);
      let lastAt = Date.now();
      await channel.consume(this.queue, (message) => {
        if (!message) return;
        const event = JSON.parse(message.content.toString()) as { id: string; data: { objectId: string } };
        events.push({ id: event.id, portId: event.data.objectId });
        lastAt = Date.now();
        channel.ack(message);
      });
      while (Date.now() - lastAt < idleMilliseconds) await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      await connection.close();
    }
    return events;
  }
}

/**
 * Counts, over `portIds`, the ports that never got a provisioning.complete event (lost) and those
 * that got it under more than one event id (a transition emitted twice: a duplicate effect). The same
 * id delivered twice is a redelivery, not a duplicate effect.
 */
export function countCompletions(
  portIds: ReadonlyArray<string>,
  events: ReadonlyArray<CompletionEvent>,
): { lost: number; duplicated: number; deliveries: number } {
  const idsByPort = new Map<string, Set<string>>();
  for (const event of events) {
    const ids = idsByPort.get(event.portId) ?? new Set<string>();
    ids.add(event.id);
    idsByPort.set(event.portId, ids);
  }
  let lost = 0;
  let duplicated = 0;
  for (const port of portIds) {
    const ids = idsByPort.get(port);
    if (!ids) lost++;
    else if (ids.size > 1) duplicated++;
  }
  return { lost, duplicated, deliveries: events.length };
}
