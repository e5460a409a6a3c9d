import { countDeadLetters, type DeadLetter, listDeadLetters } from '@lifeguard/operator-views';
import type { AmqpClient } from '@lifeguard/runtime';

/** How many dead letters the queues page lists (oldest first). */
export const DEAD_LETTERS_SHOWN = 50;

/** The dead letters as last read, and whether the queue has changed since. */
export interface DeadLetterListing {
  /** Messages in the dead-letter queue now (a passive declare: nothing is read). */
  readonly count: number;
  /** The first DEAD_LETTERS_SHOWN, as read at `readAt`; null when never read. */
  readonly letters: ReadonlyArray<DeadLetter> | null;
  /** ISO 8601 time of that read, or null. */
  readonly readAt: string | null;
  /** True when the queue's count changed since that read (reload the page to read it again). */
  readonly stale: boolean;
}

/**
 * Reads the dead-letter queue as seldom as possible. Listing it means taking every message and putting
 * it back (`listDeadLetters`, as `lifeguard dlq list`), and each such read adds one to a message's
 * `x-delivery-count`, which a quorum queue with a delivery limit counts against it. So the console
 * reads it only on a page load (never on a live refresh) and only when its message count changed
 * since the last read; otherwise it shows the last listing. A write action that changes the queue
 * (a replay) calls `forget`.
 */
export class DeadLetterCache {
  private last: { count: number; letters: DeadLetter[]; readAt: string } | null = null;

  /**
   * The listing for a page. `mayRead`: a full page load (true) may read the queue; a live refresh
   * (false) never does.
   */
  async listing(amqp: AmqpClient, mayRead: boolean): Promise<DeadLetterListing> {
    const count = await countDeadLetters(amqp);
    if (count === 0) {
      this.last = { count: 0, letters: [], readAt: new Date().toISOString() };
      return { count, letters: [], readAt: this.last.readAt, stale: false };
    }
    if ((this.last === null || this.last.count !== count) && mayRead) {
      this.last = {
        count,
        letters: await listDeadLetters(amqp, DEAD_LETTERS_SHOWN),
        readAt: new Date().toISOString(),
      };
    }
    return {
      count,
      letters: this.last?.letters ?? null,
      readAt: this.last?.readAt ?? null,
      stale: this.last !== null && this.last.count !== count,
    };
  }

  /** Drops the last listing: the next page load reads the queue again. */
  forget(): void {
    this.last = null;
  }
}
