import { encodeOsloBody, OSLO_MESSAGE_PROPERTIES } from '@lifeguard/contracts';
import { type AmqpClient, UnroutableMessageError } from '@lifeguard/runtime';
import type { Logger } from 'pino';

export interface OsloReplySenderOptions {
  amqp: Pick<AmqpClient, 'publish'>;
  logger: Logger;
  /**
   * How long a reply to a reply queue that does not exist (the broker returned it) is retried, in
   * seconds, every 0.25 s (oslo's kombu_missing_consumer_retry_timeout, default 60).
   */
  missingQueueRetrySeconds: number;
}

const RETRY_INTERVAL_MILLISECONDS = 250;
const GONE_QUEUE_MEMORY_MILLISECONDS = 60_000;
const GONE_QUEUE_MEMORY_SIZE = 200;

/**
 * Sends oslo replies and call-monitor heartbeats: to the default exchange, routing key = the
 * caller's `_reply_q`, `mandatory`, with oslo's properties (JSON content type, which a Python client
 * requires; docs/oslo-messaging.md#server-rules). A reply the broker returns (the reply queue is gone) is retried as
 * oslo does, then dropped, and the queue is remembered as gone for 60 s so later replies to it are
 * dropped at once.
 */
export class OsloReplySender {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly goneQueues = new Map<string, number>();

  constructor(private readonly options: OsloReplySenderOptions) {}

  /** Sends a reply message without waiting (tracked, so `drain` can wait for it). */
  send(replyQueue: string, message: Record<string, unknown>): void {
    const sending = this.deliver(replyQueue, message).finally(() => this.inFlight.delete(sending));
    this.inFlight.add(sending);
  }

  /**
   * Sends a reply and resolves once RabbitMQ confirmed it. A reply the broker returns because the
   * reply queue does not exist (yet, or any more) resolves at once and goes on being retried in the
   * background as `send` does: nothing would take it now, and holding the request for the minute of
   * retries would hold up the queue behind it.
   * @throws Error (the publish error) when the broker nacked it or the channel closed first: the
   *   request must not be acknowledged, so that it is redelivered and answered again
   */
  async sendConfirmed(replyQueue: string, message: Record<string, unknown>): Promise<void> {
    const goneUntil = this.goneQueues.get(replyQueue);
    if (goneUntil !== undefined && goneUntil > Date.now()) return;
    try {
      await this.options.amqp.publish('', replyQueue, Buffer.from(encodeOsloBody(message)), {
        ...OSLO_MESSAGE_PROPERTIES,
        mandatory: true,
      });
    } catch (error) {
      if (!(error instanceof UnroutableMessageError)) {
        this.options.logger.warn(
          { err: error, replyQueue, msgId: message._msg_id },
          'reply could not be published; the request will be answered on redelivery',
        );
        throw error;
      }
      this.send(replyQueue, message);
    }
  }

  /** Waits for every reply in flight, at most `timeoutMilliseconds`. */
  async drain(timeoutMilliseconds: number): Promise<void> {
    if (this.inFlight.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.inFlight]),
      new Promise((resolve) => {
        timer = setTimeout(resolve, timeoutMilliseconds);
      }),
    ]);
    clearTimeout(timer);
  }

  private async deliver(replyQueue: string, message: Record<string, unknown>): Promise<void> {
    const { amqp, logger, missingQueueRetrySeconds } = this.options;
    const goneUntil = this.goneQueues.get(replyQueue);
    if (goneUntil !== undefined) {
      if (goneUntil > Date.now()) {
        logger.debug({ replyQueue, msgId: message._msg_id }, 'reply queue is gone; reply dropped');
        return;
      }
      this.goneQueues.delete(replyQueue);
    }
    const body = Buffer.from(encodeOsloBody(message));
    const deadline = Date.now() + missingQueueRetrySeconds * 1000;
    for (;;) {
      try {
        await amqp.publish('', replyQueue, body, { ...OSLO_MESSAGE_PROPERTIES, mandatory: true });
        return;
      } catch (error) {
        if (error instanceof UnroutableMessageError && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, RETRY_INTERVAL_MILLISECONDS));
          continue;
        }
        if (error instanceof UnroutableMessageError) {
          logger.warn(
            { replyQueue, msgId: message._msg_id, seconds: missingQueueRetrySeconds },
            'reply queue missing; reply abandoned',
          );
          this.rememberGone(replyQueue);
          return;
        }
        logger.warn({ err: error, replyQueue, msgId: message._msg_id }, 'reply could not be published');
        return;
      }
    }
  }

  private rememberGone(replyQueue: string): void {
    if (this.goneQueues.size >= GONE_QUEUE_MEMORY_SIZE) {
      const oldest = this.goneQueues.keys().next().value;
      if (oldest !== undefined) this.goneQueues.delete(oldest);
    }
    this.goneQueues.set(replyQueue, Date.now() + GONE_QUEUE_MEMORY_MILLISECONDS);
  }
}
