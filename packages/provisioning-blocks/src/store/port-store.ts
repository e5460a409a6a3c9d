import { randomUUID } from 'node:crypto';
import type { EventOf, EventSource, Port } from '@lifeguard/contracts';
import type { RedisClient } from '@lifeguard/runtime';
import { defineRedisScripts, runScript } from '@lifeguard/runtime';
import {
  deletePortScript,
  PORT_SCRIPTS,
  PROVISIONED_KEYS,
  PROVISIONED_VALUES,
  portDownScript,
  portProvisionedScript,
  writePortScript,
} from '../lua/port-scripts.ts';
import { outboxFieldsOf } from './outbox-entry.ts';
import { encodePortFields, type StoredPort } from './port-record.ts';
import type { ProvisioningKeys } from './provisioning-keys.ts';
import { ProvisioningReader } from './provisioning-reader.ts';
import { ScriptBatch } from './script-batch.ts';

/** One change to a port's blocks, applied in the same script as the port write. */
export interface BlockOperation {
  readonly operation: 'add' | 'remove';
  readonly entity: string;
}

/** Result of a port write: `ok` with, per block operation, whether it changed anything. */
export type PortWriteResult =
  | { readonly status: 'ok'; readonly blockChanges: ReadonlyArray<boolean> }
  | { readonly status: 'exists' | 'missing' | 'conflict' };

/** Outcome of `markProvisioned` (ML2's _port_provisioned, docs/neutron-provisioning-rules.md#active-after-provisioning). */
export type ProvisionedOutcome =
  | 'duplicate'
  | 'missing'
  | 'binding_failed'
  | 'unbound'
  | 'unbound_retry'
  | 'blocked'
  | 'admin_down'
  | 'already_active'
  | 'activated';

/** Events at most in one portProvisionedScript call (see ScriptBatch). */
const MAX_PROVISIONED_PER_SCRIPT = 32;

/**
 * Port records in Redis and the atomic scripts that write them. Rules (which blocks to add) are
 * decided by the caller (PortProvisioning); this class only stores.
 */
export class PortStore {
  private readonly reader: ProvisioningReader;
  /** The events marked provisioned in one round of I/O, sent as one portProvisionedScript call. */
  private readonly provisioned: ScriptBatch<{ keys: string[]; args: Array<string | number> }, string>;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ProvisioningKeys,
    private readonly source: EventSource,
  ) {
    defineRedisScripts(redis, PORT_SCRIPTS);
    this.reader = new ProvisioningReader(redis, keys);
    this.provisioned = new ScriptBatch(
      redis,
      portProvisionedScript,
      (calls) => ({ keys: calls.flatMap((each) => each.keys), args: calls.flatMap((each) => each.args) }),
      MAX_PROVISIONED_PER_SCRIPT,
    );
  }

  /** The port, or null when it does not exist. */
  get(portId: string): Promise<StoredPort | null> {
    return this.reader.port(portId);
  }

  /** Resolves a device name to a port id as ML2 does (see ProvisioningReader.resolveDevice). */
  resolveDevice(device: string | readonly [string, string | null]): Promise<string | null> {
    return this.reader.resolveDevice(device);
  }

  /**
   * Writes a port (create when `expectedRevision` is null, else update when the stored revision
   * still equals it), its block operations and an optional status event, atomically.
   */
  async write(
    portId: string,
    expectedRevision: number | null,
    fields: Partial<Port>,
    macAddresses: { previous: string; current: string },
    blockOperations: ReadonlyArray<BlockOperation>,
    statusEvent: EventOf<'port.status.changed'> | null,
  ): Promise<PortWriteResult> {
    const pairs = encodePortFields(fields);
    const args: Array<string | number> = [expectedRevision === null ? '' : String(expectedRevision), portId];
    args.push(pairs.length / 2, ...pairs, blockOperations.length);
    for (const each of blockOperations) args.push(each.operation, each.entity);
    const eventFields = statusEvent ? outboxFieldsOf(statusEvent) : [];
    args.push(eventFields.length, ...eventFields);
    const reply = (await runScript(
      this.redis,
      writePortScript,
      [
        this.keys.port(portId),
        this.keys.blocks('port', portId),
        this.keys.portIds,
        this.keys.portsByMac(macAddresses.previous),
        this.keys.portsByMac(macAddresses.current),
        this.keys.outbox,
        this.keys.completion('port', portId),
      ],
      args,
    )) as [string, ...number[]];
    if (reply[0] !== 'ok') return { status: reply[0] as 'exists' | 'missing' | 'conflict' };
    return { status: 'ok', blockChanges: reply.slice(1).map((value) => Number(value) === 1) };
  }

  /**
   * Deletes a port and its blocks when its revision is still `expectedRevision`.
   * @returns the entities whose blocks were removed, or the reason nothing was deleted
   */
  async delete(
    port: StoredPort,
  ): Promise<{ status: 'ok'; removedBlocks: string[] } | { status: 'missing' | 'conflict' }> {
    const reply = (await runScript(
      this.redis,
      deletePortScript,
      [
        this.keys.port(port.id),
        this.keys.blocks('port', port.id),
        this.keys.portIds,
        this.keys.portsByMac(port.mac_address),
        this.keys.completion('port', port.id),
      ],
      [String(port.revision), port.id],
    )) as string[];
    if (reply[0] !== 'ok') return { status: reply[0] as 'missing' | 'conflict' };
    return { status: 'ok', removedBlocks: reply.slice(1) };
  }

  /**
   * Sets the port ACTIVE if it still qualifies (docs/neutron-provisioning-rules.md#active-after-provisioning) and records `eventId` as handled,
   * atomically; on a change appends `port.status.changed` to the outbox.
   * @param lastAttempt false while a compute port seen unbound may still be retried
   * @returns the outcome, and for `activated` the previous status
   */
  async markProvisioned(
    portId: string,
    eventId: string,
    triggerEntity: string,
    handledTtlSeconds: number,
    lastAttempt: boolean,
  ): Promise<{ outcome: ProvisionedOutcome; previousStatus: string | null }> {
    // Sent with the other events marked in this round of I/O, in one script call.
    const keys = [
      this.keys.port(portId),
      this.keys.outbox,
      this.keys.blocks('port', portId),
      this.keys.handledEvent(eventId),
      this.keys.portsAwaitingActive,
    ];
    const args = [handledTtlSeconds, ...this.newEventArgs(), triggerEntity, lastAttempt ? '1' : '0', portId];
    if (keys.length !== PROVISIONED_KEYS || args.length !== PROVISIONED_VALUES)
      throw new Error('portProvisionedScript layout mismatch');
    const reply = String(await this.provisioned.run({ keys, args }));
    if (reply.startsWith('activated:')) {
      return { outcome: 'activated', previousStatus: reply.slice('activated:'.length) };
    }
    return { outcome: reply as ProvisionedOutcome, previousStatus: null };
  }

  /**
   * Sets the port DOWN unless `host` is given and the port is bound elsewhere; on a change appends
   * `port.status.changed` to the outbox.
   */
  async markDown(
    portId: string,
    host: string | null,
  ): Promise<{ outcome: 'missing' | 'not_bound' | 'unchanged' | 'changed'; previousStatus: string | null }> {
    const reply = String(
      await runScript(
        this.redis,
        portDownScript,
        [this.keys.port(portId), this.keys.outbox, this.keys.completion('port', portId)],
        [host ?? '', ...this.newEventArgs()],
      ),
    );
    if (reply.startsWith('changed:'))
      return { outcome: 'changed', previousStatus: reply.slice('changed:'.length) };
    return { outcome: reply as 'missing' | 'not_bound' | 'unchanged', previousStatus: null };
  }

  /**
   * Event id, occurredAt, service and instance of an event whose other facts the Lua script reads
   * and appends to the outbox (store/outbox-entry.ts). The id is fixed here, before the commit, so every relay of the outbox entry carries it.
   */
  private newEventArgs(): string[] {
    return [randomUUID(), new Date().toISOString(), this.source.service, this.source.instance];
  }
}
