import { createEvent, type EventOf, type EventSource, eventRoutingKey } from '@lifeguard/contracts';
import type { Redis } from 'ioredis';
import { UnregisteredObjectTypeError } from '../errors.ts';
import {
  addBlockScript,
  COMPLETION_CODES,
  completeScript,
  isBlockedScript,
  removeBlockScript,
} from '../lua/block-scripts.ts';
import type { ProvisioningMetrics } from '../metrics.ts';
import type { ProvisioningKeys } from './provisioning-keys.ts';

/** What `addProvisioningComponent` did: stored a block, found it already there, or found no object. */
export type AddOutcome = 'added' | 'duplicate' | 'missing';

/** What a completion did (see `provisioningComplete`). */
export type CompletionOutcome = 'emitted' | 'blocked' | 'missing' | 'not-bound-to-host';

export interface CompletionResult {
  readonly outcome: CompletionOutcome;
  /** True when this entity's block existed and was removed. */
  readonly removed: boolean;
  /** The `provisioning.complete` event appended to the outbox, when `outcome` is `emitted`. */
  readonly event: EventOf<'provisioning.complete'> | null;
  /** For `not-bound-to-host`: the port's `device_owner`, `device_id` and `binding:host_id`. */
  readonly port?: { deviceOwner: string; deviceId: string; boundHost: string };
}

export interface CompleteOptions {
  /** The request's `request_id`, carried in the event. */
  requestId?: string | null;
  /**
   * Only for ports: the reporting agent's host. When given, the port must be bound to it
   * (`binding:host_id`), else nothing changes and the outcome is `not-bound-to-host` (research A.3.2).
   */
  host?: string | null;
}

/**
 * Neutron's provisioning_blocks module (research A.1) on Redis, for any registered object type. A
 * block is "entity E still has to finish object X"; the blocks of an object are one Redis set.
 * An object exists while its record exists (port records are kept by this service; `port` is
 * registered by default). Every operation is one Lua script, so it is atomic; a completion that
 * removes the last block appends its `provisioning.complete` event to the outbox stream in the same
 * script (the transactional outbox), and the OutboxRelay publishes it.
 */
export class BlockStore {
  private readonly recordKeys = new Map<string, (objectId: string) => string>();

  constructor(
    private readonly redis: Redis,
    private readonly keys: ProvisioningKeys,
    private readonly source: EventSource,
    private readonly metrics: ProvisioningMetrics | null = null,
  ) {
    this.registerObjectType('port', (portId) => keys.port(portId));
  }

  /**
   * Registers an object type, as Neutron's add_model_for_resource: `recordKey(id)` is the Redis key
   * whose existence means "the object exists". Registering a type again replaces its record key.
   */
  registerObjectType(objectType: string, recordKey: (objectId: string) => string): void {
    this.recordKeys.set(objectType, recordKey);
  }

  private objectKeys(objectType: string, objectId: string): [string, string] {
    const recordKey = this.recordKeys.get(objectType);
    if (!recordKey) throw new UnregisteredObjectTypeError(objectType);
    return [recordKey(objectId), this.keys.blocks(objectType, objectId)];
  }

  /**
   * As add_provisioning_component: entity `entity` now blocks the object. Idempotent (adding an
   * existing block changes nothing); an object that does not exist stores nothing.
   * @throws UnregisteredObjectTypeError for an unregistered type
   */
  async addProvisioningComponent(objectId: string, objectType: string, entity: string): Promise<AddOutcome> {
    const keys = this.objectKeys(objectType, objectId);
    const reply = Number(await addBlockScript.run(this.redis, keys, [entity]));
    if (reply === 1) this.metrics?.blocksAdded.inc({ entity });
    return reply === 1 ? 'added' : reply === 0 ? 'duplicate' : 'missing';
  }

  /**
   * As remove_provisioning_component: removes entity's block without ever emitting an event, even
   * when it was the last block ("this block no longer applies", research A.1.3).
   * @returns true when a block was removed; false when there was none or the object does not exist
   * @throws UnregisteredObjectTypeError for an unregistered type
   */
  async removeProvisioningComponent(objectId: string, objectType: string, entity: string): Promise<boolean> {
    const keys = this.objectKeys(objectType, objectId);
    const removed = Number(await removeBlockScript.run(this.redis, keys, [entity])) === 1;
    if (removed) this.metrics?.blocksRemoved.inc({ entity, reason: 'cleared' });
    return removed;
  }

  /**
   * As provisioning_complete (research A.1.3), atomically: removes entity's block and, when no block
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
    options: CompleteOptions = {},
  ): Promise<CompletionResult> {
    const [recordKey, blocksKey] = this.objectKeys(objectType, objectId);
    const event = createEvent(
      'provisioning.complete',
      { objectType, objectId, entity, ...(options.requestId ? { requestId: options.requestId } : {}) },
      this.source,
    );
    const reply = (await completeScript.run(
      this.redis,
      [recordKey, blocksKey, this.keys.outbox],
      [entity, event.id, eventRoutingKey(event), event.occurredAt, JSON.stringify(event), options.host ?? ''],
    )) as [number, number, string?, string?, string?];
    const [code, removedCount] = reply;
    const removed = removedCount === 1;
    if (removed) this.metrics?.blocksRemoved.inc({ entity, reason: 'completed' });
    switch (code) {
      case COMPLETION_CODES.emitted:
        this.metrics?.completions.inc({ entity, outcome: 'emitted' });
        return { outcome: 'emitted', removed, event };
      case COMPLETION_CODES.blocked:
        this.metrics?.completions.inc({ entity, outcome: 'blocked' });
        return { outcome: 'blocked', removed, event: null };
      case COMPLETION_CODES.notBoundToHost:
        this.metrics?.completions.inc({ entity, outcome: 'not_bound_to_host' });
        return {
          outcome: 'not-bound-to-host',
          removed: false,
          event: null,
          port: {
            deviceOwner: JSON.parse(reply[2] ?? '""'),
            deviceId: JSON.parse(reply[3] ?? '""'),
            boundHost: JSON.parse(reply[4] ?? '""'),
          },
        };
      default:
        this.metrics?.completions.inc({ entity, outcome: 'missing' });
        return { outcome: 'missing', removed: false, event: null };
    }
  }

  /**
   * As is_object_blocked: true when the object exists and at least one block remains.
   * @throws UnregisteredObjectTypeError for an unregistered type
   */
  async isObjectBlocked(objectId: string, objectType: string): Promise<boolean> {
    const keys = this.objectKeys(objectType, objectId);
    return Number(await isBlockedScript.run(this.redis, keys, [])) === 1;
  }

  /** The entities currently blocking an object, sorted (for operators). */
  async blockingEntities(objectId: string, objectType: string): Promise<string[]> {
    const [, blocksKey] = this.objectKeys(objectType, objectId);
    return (await this.redis.smembers(blocksKey)).sort();
  }
}
