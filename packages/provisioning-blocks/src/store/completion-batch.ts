import type { EventSource } from '@lifeguard/contracts';
import type { RedisClient } from '@lifeguard/runtime';
import { runScript } from '@lifeguard/runtime';
import { COMPLETION_REQUEST_VALUES, completeScript } from '../lua/block-scripts.ts';

/** One request's completion as completeScript takes it (see there for each value). */
export interface CompletionCall {
  /** The handled marker's key, or null without a marker. */
  readonly markerKey: string | null;
  readonly markerTtlSeconds: number | null;
  readonly markerValue: string;
  readonly entity: string;
  /** '' = no host check. */
  readonly host: string;
  /** The id a `port.vif.plugged` event of this request gets ('' when it cannot have one). */
  readonly vifPluggedId: string;
  readonly occurredAt: string;
  readonly objectType: string;
  /** '' = none. */
  readonly requestId: string;
  /** Per object: its record, blocks and completion-id keys, its id and the event id it offers. */
  readonly objects: ReadonlyArray<{
    readonly keys: readonly [record: string, blocks: string, completion: string];
    readonly objectId: string;
    readonly offeredEventId: string;
  }>;
}

/**
 * One request's part of completeScript's reply: `['duplicate', value]` or `['ok', ...per object]`
 * (`['error', message]` is turned into a CompletionCommandError).
 */
export type CompletionReply = [string, ...Array<[number, number, string?]>];

/**
 * completeScript's KEYS and ARGV for `calls`, in order (the layout documented on the script).
 * @param outbox the outbox stream's key, which also stands for the marker of a call without one
 */
export function completionScriptCall(
  calls: ReadonlyArray<CompletionCall>,
  common: { outbox: string; portsAwaitingActive: string; source: EventSource },
): { keys: string[]; args: Array<string | number> } {
  const keys = [common.outbox, common.portsAwaitingActive];
  const args: Array<string | number> = [common.source.service, common.source.instance, calls.length];
  for (const call of calls) {
    keys.push(call.markerKey ?? common.outbox);
    const values: Array<string | number> = [
      call.entity,
      call.markerKey === null || call.markerTtlSeconds === null ? '' : call.markerTtlSeconds,
      call.markerValue,
      call.host,
      call.vifPluggedId,
      call.occurredAt,
      call.objectType,
      call.requestId,
      call.objects.length,
    ];
    if (values.length !== COMPLETION_REQUEST_VALUES) throw new Error('completeScript layout mismatch');
    args.push(...values);
    for (const object of call.objects) {
      keys.push(...object.keys);
      args.push(object.objectId, object.offeredEventId);
    }
  }
  return { keys, args };
}

/** A Redis command failed for one request of a completeScript call (the others ran). */
export class CompletionCommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CompletionCommandError';
  }
}

/** Requests at most in one script call: Redis runs each call without interruption, and a call stays a
 * few kilobytes (the calls of one round still leave in one write, auto-pipelined). */
export const MAX_CALLS_PER_SCRIPT = 32;

interface Pending {
  readonly call: CompletionCall;
  readonly resolve: (reply: CompletionReply) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Sends the completions requested while the event loop handles one round of I/O (the agent requests
 * RabbitMQ delivered together) as one completeScript call — at most MAX_CALLS_PER_SCRIPT requests
 * each, in the order they were requested — at the end of that round (setImmediate), and hands each
 * request its own part of the reply. The script applies them in order, each with its marker, so the
 * outcome is that of one script per request; a failed call fails each of its requests.
 */
export class CompletionBatch {
  private pending: Pending[] = [];
  private scheduled = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly common: { outbox: string; portsAwaitingActive: string; source: EventSource },
  ) {}

  /** Completes `call` with the others of this round; resolves with its part of the reply. */
  complete(call: CompletionCall): Promise<CompletionReply> {
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
    for (let start = 0; start < pending.length; start += MAX_CALLS_PER_SCRIPT) {
      const part = pending.slice(start, start + MAX_CALLS_PER_SCRIPT);
      const { keys, args } = completionScriptCall(
        part.map((each) => each.call),
        this.common,
      );
      runScript(this.redis, completeScript, keys, args).then(
        (reply) => {
          const replies = reply as CompletionReply[];
          part.forEach((each, index) => {
            const own = replies[index];
            if (!own)
              each.reject(new Error(`completeScript answered ${replies.length} of ${part.length} requests`));
            else if (own[0] === 'error') each.reject(new CompletionCommandError(String(own[1])));
            else each.resolve(own);
          });
        },
        (error: unknown) => {
          for (const each of part) each.reject(error);
        },
      );
    }
  }
}
