import type { EventSource } from '@lifeguard/contracts';
import { COMPLETION_REQUEST_VALUES } from '../lua/block-scripts.ts';

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
 * (`['error', message]` rejects that request, see ScriptBatch).
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

/**
 * Requests at most in one completeScript call: Redis runs each call without interruption, and a call
 * stays a few kilobytes (the calls of one round still leave in one write, auto-pipelined).
 */
export const MAX_COMPLETIONS_PER_SCRIPT = 32;
