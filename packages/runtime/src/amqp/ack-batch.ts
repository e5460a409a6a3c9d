import type { Channel, ConsumeMessage } from 'amqplib';
import type { Logger } from 'pino';

/** How the acknowledgements due on a channel are sent: one `multiple` ack up to a tag, then single ones. */
export interface AckPlan {
  /** Ack every delivery up to and including this tag with one `multiple` ack; null when none. */
  readonly upTo: number | null;
  /** Tags acknowledged one by one (due, but some earlier delivery is still unsettled). */
  readonly single: ReadonlyArray<number>;
}

/**
 * The fewest acks that settle exactly the `due` deliveries: a `multiple` ack covers the longest run
 * of the oldest unsettled deliveries that are all due (it would otherwise also settle a delivery whose
 * handler is still running), the other due deliveries are acked one by one.
 * @param unsettled every delivery tag of the channel not yet acked or nacked, `due` ones included
 * @param due the tags whose handlers finished and may be acked now
 */
export function ackPlan(unsettled: Iterable<number>, due: Iterable<number>): AckPlan {
  const dueTags = new Set(due);
  const ordered = [...unsettled].sort((a, b) => a - b);
  let covered = 0;
  while (covered < ordered.length && dueTags.has(ordered[covered]!)) covered++;
  // A run of one is acked on its own: a `multiple` ack of one delivery is the same frame.
  const upTo = covered >= 2 ? ordered[covered - 1]! : null;
  const inRun = new Set(upTo === null ? [] : ordered.slice(0, covered));
  const single = [...dueTags].filter((tag) => !inRun.has(tag)).sort((a, b) => a - b);
  return { upTo, single };
}

/**
 * The acknowledgements of one consumer channel, sent together: acks requested while the event loop
 * handles one round of I/O (handlers finishing on the same batch of confirms or Redis replies) go out
 * at the end of it (setImmediate) as one `multiple` ack where ackPlan allows. Nacks and dead-letter
 * acks are sent at once and leave the unsettled set. Each message is acked only after its handler
 * resolved, so the batching never acknowledges a delivery before its effect.
 */
export class AckBatch {
  private readonly unsettled = new Set<number>();
  private readonly due = new Set<number>();
  private scheduled: NodeJS.Immediate | null = null;

  constructor(
    private readonly channel: Channel,
    private readonly logger: Logger,
  ) {}

  /** A delivery arrived on the channel. */
  delivered(message: ConsumeMessage): void {
    this.unsettled.add(message.fields.deliveryTag);
  }

  /** The message's handler finished: ack it with the others due in this round. */
  ack(message: ConsumeMessage): void {
    this.due.add(message.fields.deliveryTag);
    this.scheduled ??= setImmediate(() => this.flush());
  }

  /**
   * Settles one message now, on its own (nack, or the ack after dead-lettering).
   * @throws the channel's error when it is closed (the broker redelivers the message)
   */
  settleNow(message: ConsumeMessage, settle: (channel: Channel) => void): void {
    this.unsettled.delete(message.fields.deliveryTag);
    this.due.delete(message.fields.deliveryTag);
    settle(this.channel);
  }

  /** Sends the acks due now (also called before the channel is closed). */
  flush(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = null;
    if (this.due.size === 0) return;
    const plan = ackPlan(this.unsettled, this.due);
    const tags = [...this.due];
    this.due.clear();
    for (const tag of tags) this.unsettled.delete(tag);
    try {
      if (plan.upTo !== null) this.channel.ack(tagOnly(plan.upTo), true);
      for (const tag of plan.single) this.channel.ack(tagOnly(tag));
    } catch (error) {
      // The channel died under us: the broker redelivers what was not acknowledged.
      this.logger.warn(
        { err: error, count: tags.length },
        'could not acknowledge; the broker will redeliver',
      );
    }
  }
}

/** amqplib's ack reads only the delivery tag of the message it is given. */
const tagOnly = (deliveryTag: number) => ({ fields: { deliveryTag } }) as ConsumeMessage;
