import type { RedisClient, RedisScript } from '@lifeguard/runtime';
import { runScript } from '@lifeguard/runtime';

/** A Redis command failed for one item of a batched script call (the others ran). */
export class ScriptItemError extends Error {
  constructor(
    readonly command: string,
    message: string,
  ) {
    super(message);
    this.name = 'ScriptItemError';
  }
}

interface Pending<Call, Reply> {
  readonly call: Call;
  readonly resolve: (reply: Reply) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Sends the calls of a batched script (one that applies a list of items in order, each as its own
 * script would, and answers one reply per item) made while the event loop handles one round of I/O
 * — the messages RabbitMQ delivered together — as one script call, at most `maxCalls` items each,
 * in the order they were made, at the end of that round (setImmediate), and hands each caller its own
 * reply. A reply `['error', message]` (the script caught a failed command for that item) rejects
 * that caller alone with ScriptItemError; a failed call rejects each of its callers.
 */
export class ScriptBatch<Call, Reply> {
  private pending: Array<Pending<Call, Reply>> = [];
  private scheduled = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly script: RedisScript,
    /** The script's KEYS and ARGV for these calls, in order. */
    private readonly pack: (calls: ReadonlyArray<Call>) => { keys: string[]; args: Array<string | number> },
    private readonly maxCalls: number,
  ) {}

  /** Runs `call` with the others of this round; resolves with its own reply. */
  run(call: Call): Promise<Reply> {
    return new Promise((resolve, reject) => {
      this.pending.push({ call, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    this.scheduled = false;
    const pending = this.pending;
    this.pending = [];
    for (let start = 0; start < pending.length; start += this.maxCalls) {
      const part = pending.slice(start, start + this.maxCalls);
      const { keys, args } = this.pack(part.map((each) => each.call));
      runScript(this.redis, this.script, keys, args).then(
        (reply) => this.settle(part, reply as unknown[]),
        (error: unknown) => {
          for (const each of part) each.reject(error);
        },
      );
    }
  }

  private settle(part: ReadonlyArray<Pending<Call, Reply>>, replies: unknown[]): void {
    part.forEach((each, index) => {
      const own = replies[index];
      if (own === undefined) {
        each.reject(new Error(`${this.script.command} answered ${replies.length} of ${part.length} items`));
      } else if (Array.isArray(own) && own[0] === 'error') {
        each.reject(new ScriptItemError(this.script.command, String(own[1])));
      } else {
        each.resolve(own as Reply);
      }
    });
  }
}
