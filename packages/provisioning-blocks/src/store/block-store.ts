import { randomUUID } from 'node:crypto';
import {
  type EventOf,
  type EventSource,
  provisioningCompleteEvent,
  transitionEventId,
} from '@lifeguard/contracts';
import type { RedisClient } from '@lifeguard/runtime';
import { defineRedisScripts, runScript } from '@lifeguard/runtime';
import { UnregisteredObjectTypeError } from '../errors.ts';
import {
  addBlockScript,
  BLOCK_SCRIPTS,
  COMPLETION_CODES,
  completeScript,
  isBlockedScript,
  removeBlockScript,
} from '../lua/block-scripts.ts';
import type { ProvisioningMetrics } from '../metrics.ts';
import {
  type CompletionCall,
  type CompletionReply,
  completionScriptCall,
  MAX_COMPLETIONS_PER_SCRIPT,
} from './completion-batch.ts';
import type { ProvisioningKeys } from './provisioning-keys.ts';
import { ProvisioningReader } from './provisioning-reader.ts';
import { ScriptBatch } from './script-batch.ts';

/** What `addProvisioningComponent` did: stored a block, found it already there, or found no object. */
export type AddOutcome = 'added' | 'duplicate' | 'missing';

/** What a completion did (see `provisioningComplete`). */
export type CompletionOutcome = 'emitted' | 'blocked' | 'missing' | 'not-bound-to-host';

export interface CompletionResult {
  readonly outcome: CompletionOutcome;
  /** True when this entity's block existed and was removed. */
  readonly removed: boolean;
  /**
   * The `provisioning.complete` event the relay publishes for this completion (same id), when
   * `outcome` is `emitted`; built from contracts when read.
   */
  readonly event: EventOf<'provisioning.complete'> | null;
}

/**
 * The "request handled" marker of the request reporting a completion, committed in the same script
 * as the completion (duplicate suppression by oslo `_unique_id`): when `key` exists the completion is
 * a duplicate and nothing is done; otherwise `key` is set to `value` for `ttlSeconds`.
 */
export interface HandledMarker {
  readonly key: string;
  readonly ttlSeconds: number;
  readonly value: string;
}

export interface CompleteOptions {
  /** The request's `request_id`, carried in the event. */
  requestId?: string | null;
  /**
   * Only for ports, and one port at a time: the reporting agent's host. When given, the port must be
   * bound to it (`binding:host_id`), else nothing changes, the outcome is `not-bound-to-host`, and a
   * compute port gets a `port.vif.plugged` event for Nova (docs/neutron-provisioning-rules.md#update_device_up-and-update_device_down).
   */
  host?: string | null;
  /** The reporting request's handled marker, written with the completion (see HandledMarker). */
  handled?: HandledMarker | null;
}

/**
 * The id a completion offers for an event: with the reporting request's handled marker, the
 * transition id (contracts' `transitionEventId`, a name-based UUID) of the event type, the marker's
 * key and the object, so that the request handled again after its first write was lost with a Redis
 * master (asynchronous replication) offers the id the first attempt's event may already have been
 * published under; without a marker, a random one.
 */
export function offeredEventId(
  handled: HandledMarker | null | undefined,
  type: 'provisioning.complete' | 'port.vif.plugged',
  objectId: string,
): string {
  return handled ? transitionEventId(type, handled.key, objectId) : randomUUID();
}

/**
 * Neutron's provisioning_blocks module (docs/neutron-provisioning-rules.md#provisioning_complete) on Redis, for any registered object type. A
 * block is "entity E still has to finish object X"; the blocks of an object are one Redis set.
 * An object exists while its record exists (port records are kept by this service; `port` is
 * registered by default). Every operation is one Lua script, so it is atomic; a completion that
 * removes the last block appends its `provisioning.complete` event to the outbox stream in the same
 * script (the transactional outbox), and the OutboxRelay publishes it.
 */
export class BlockStore {
  private readonly recordKeys = new Map<string, (objectId: string) => string>();
  private readonly reader: ProvisioningReader;
  /** The completions requested in one round of I/O, sent as one completeScript call. */
  private readonly completions: ScriptBatch<CompletionCall, CompletionReply>;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ProvisioningKeys,
    private readonly source: EventSource,
    private readonly metrics: ProvisioningMetrics | null = null,
  ) {
    defineRedisScripts(redis, BLOCK_SCRIPTS);
    this.reader = new ProvisioningReader(redis, keys);
    const common = { outbox: keys.outbox, portsAwaitingActive: keys.portsAwaitingActive, source };
    this.completions = new ScriptBatch(
      redis,
      completeScript,
      (calls) => completionScriptCall(calls, common),
      MAX_COMPLETIONS_PER_SCRIPT,
    );
    this.registerObjectType('port', (portId) => keys.port(portId));
  }

  /**
   * Registers an object type, as Neutron's add_model_for_resource: `recordKey(id)` is the Redis key
   * whose existence means "the object exists". Registering a type again replaces its record key.
   */
  registerObjectType(objectType: string, recordKey: (objectId: string) => string): void {
    this.recordKeys.set(objectType, recordKey);
  }

  /** An object's record, blocks and completion-id keys (KEYS of the block scripts, in that order). */
  private objectKeys(objectType: string, objectId: string): [string, string, string] {
    const recordKey = this.recordKeys.get(objectType);
    if (!recordKey) throw new UnregisteredObjectTypeError(objectType);
    return [
      recordKey(objectId),
      this.keys.blocks(objectType, objectId),
      this.keys.completion(objectType, objectId),
    ];
  }

  /**
   * As add_provisioning_component: entity `entity` now blocks the object. Idempotent (adding an
   * existing block changes nothing); an object that does not exist stores nothing.
   * @throws UnregisteredObjectTypeError for an unregistered type
   */
  async addProvisioningComponent(objectId: string, objectType: string, entity: string): Promise<AddOutcome> {
    const keys = this.objectKeys(objectType, objectId);
    const reply = Number(await runScript(this.redis, addBlockScript, keys, [entity]));
    if (reply === 1) this.metrics?.blocksAdded.inc({ entity });
    return reply === 1 ? 'added' : reply === 0 ? 'duplicate' : 'missing';
  }

  /**
   * As remove_provisioning_component: removes entity's block without ever emitting an event, even
   * when it was the last block ("this block no longer applies", docs/neutron-provisioning-rules.md#provisioning_complete).
   * @returns true when a block was removed; false when there was none or the object does not exist
   * @throws UnregisteredObjectTypeError for an unregistered type
   */
  async removeProvisioningComponent(objectId: string, objectType: string, entity: string): Promise<boolean> {
    const keys = this.objectKeys(objectType, objectId);
    const removed = Number(await runScript(this.redis, removeBlockScript, keys, [entity])) === 1;
    if (removed) this.metrics?.blocksRemoved.inc({ entity, reason: 'cleared' });
    return removed;
  }

  /**
   * As provisioning_complete (docs/neutron-provisioning-rules.md#provisioning_complete), atomically: removes entity's block and, when no block
   * remains, appends a `provisioning.complete` event (trigger = `entity`) to the outbox. Neutron's
   * observable semantics are kept: the event is emitted when the object had no block at all, and
   * again on every later completion while none remains; a missing object emits nothing; an entity
   * without a block while others remain emits nothing.
   * @throws UnregisteredObjectTypeError for an unregistered type
   */
  async provisioningComplete(
    objectId: string,
    objectType: string,
    entity: string,
    options: Omit<CompleteOptions, 'handled'> = {},
  ): Promise<CompletionResult> {
    const { results } = await this.provisioningCompleteMany([objectId], objectType, entity, options);
    return results[0]!;
  }

  /**
   * provisioningComplete for several objects of one type in one atomic script (a DHCP agent's
   * `dhcp_ready_on_ports` batch), optionally with the request's handled marker.
   * @returns `duplicate` (the marker existed: nothing was done) or one result per object, in order
   * @throws UnregisteredObjectTypeError for an unregistered type
   */
  async provisioningCompleteMany(
    objectIds: ReadonlyArray<string>,
    objectType: string,
    entity: string,
    options: CompleteOptions = {},
  ): Promise<{ duplicate: boolean; results: CompletionResult[] }> {
    if (options.host && objectIds.length !== 1) throw new Error('a host check applies to one port at a time');
    const occurredAt = new Date().toISOString();
    const { handled } = options;
    const objects = objectIds.map((objectId) => ({
      keys: this.objectKeys(objectType, objectId),
      objectId,
      offeredEventId: offeredEventId(handled, 'provisioning.complete', `${objectType}:${objectId}`),
    }));
    // The script appends the facts of an event for each object with no block left, under the id of
    // its round's first completion (or the new one offered), and answers that id; the relay builds
    // the event from the facts, and the same event is built here, with the same id, to return it.
    const eventOf = (index: number, id: string): EventOf<'provisioning.complete'> =>
      provisioningCompleteEvent(
        { id, occurredAt, source: this.source },
        { objectType, objectId: objectIds[index]!, entity, requestId: options.requestId ?? null },
      );
    // Sent with the other completions requested in this round of I/O, in one script call.
    const reply = await this.completions.run({
      markerKey: handled?.key ?? null,
      markerTtlSeconds: handled?.ttlSeconds ?? null,
      markerValue: handled?.value ?? '',
      entity,
      host: options.host ?? '',
      // Only a host check can append a port.vif.plugged event (and so needs its id).
      vifPluggedId: options.host ? offeredEventId(handled, 'port.vif.plugged', objectIds.join(',')) : '',
      occurredAt,
      objectType,
      requestId: options.requestId ?? '',
      objects,
    });
    if (reply[0] === 'duplicate') return { duplicate: true, results: [] };
    const results = (reply.slice(1) as Array<[number, number, string?]>).map((each, index) => {
      const [code, removedCount, eventId] = each;
      const removed = removedCount === 1;
      if (removed) this.metrics?.blocksRemoved.inc({ entity, reason: 'completed' });
      const outcome: CompletionOutcome =
        code === COMPLETION_CODES.emitted
          ? 'emitted'
          : code === COMPLETION_CODES.blocked
            ? 'blocked'
            : code === COMPLETION_CODES.notBoundToHost
              ? 'not-bound-to-host'
              : 'missing';
      this.metrics?.completions.inc({ entity, outcome: outcome.replaceAll('-', '_') });
      // Built when read: the service itself never reads it (the relay builds what it publishes).
      return {
        outcome,
        removed,
        get event() {
          return outcome === 'emitted' && eventId ? eventOf(index, eventId) : null;
        },
      };
    });
    return { duplicate: false, results };
  }

  /**
   * As is_object_blocked: true when the object exists and at least one block remains.
   * @throws UnregisteredObjectTypeError for an unregistered type
   */
  async isObjectBlocked(objectId: string, objectType: string): Promise<boolean> {
    const keys = this.objectKeys(objectType, objectId);
    return Number(await runScript(this.redis, isBlockedScript, keys, [])) === 1;
  }

  /**
   * The entities currently blocking an object, sorted (for operators).
   * @throws UnregisteredObjectTypeError for an unregistered type
   */
  async blockingEntities(objectId: string, objectType: string): Promise<string[]> {
    this.objectKeys(objectType, objectId);
    return this.reader.blockingEntities(objectId, objectType);
  }
}
