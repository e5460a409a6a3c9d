import { randomUUID } from 'node:crypto';
import { type EventOf, type EventSource, Port } from '@lifeguard/contracts';
import type { RedisClient } from '@lifeguard/runtime';
import { defineRedisScripts, runScript } from '@lifeguard/runtime';
import {
  deletePortScript,
  PORT_SCRIPTS,
  portDownScript,
  portProvisionedScript,
  writePortScript,
} from '../lua/port-scripts.ts';
import { outboxFieldsOf } from './outbox-entry.ts';
import type { ProvisioningKeys } from './provisioning-keys.ts';

/** A port as stored: the Port record plus `revision`, bumped on every write (optimistic concurrency). */
export type StoredPort = Port & { readonly revision: number };

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

const PORT_FIELDS = Object.keys(Port.shape) as Array<keyof Port>;

/** Flattens port fields into HSET field/value pairs with JSON-encoded values. */
export function encodePortFields(fields: Partial<Port>): string[] {
  const pairs: string[] = [];
  for (const name of PORT_FIELDS) {
    if (fields[name] !== undefined) pairs.push(name, JSON.stringify(fields[name]));
  }
  return pairs;
}

/** Reads a port hash back (null for an empty hash, i.e. a missing port). */
export function decodePort(hash: Record<string, string>): StoredPort | null {
  if (!hash.id) return null;
  const raw: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(hash)) {
    if (field !== 'revision') raw[field] = JSON.parse(value);
  }
  return { ...Port.parse(raw), revision: Number(hash.revision ?? 0) };
}

/** Interface-name prefixes agents put before a truncated port id (neutron-lib INTERFACE_PREFIXES). */
const INTERFACE_PREFIXES = ['tap', 'qvo', 'sg-'] as const;

const UUID_LIKE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** As oslo's uuidutils.is_uuid_like: 32 hex digits, hyphens optional, any case. */
export function isUuidLike(value: string): boolean {
  return UUID_LIKE.test(value);
}

/**
 * Port records in Redis and the atomic scripts that write them. Rules (which blocks to add) are
 * decided by the caller (PortProvisioning); this class only stores.
 */
export class PortStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ProvisioningKeys,
    private readonly source: EventSource,
  ) {
    defineRedisScripts(redis, PORT_SCRIPTS);
  }

  /** The port, or null when it does not exist. */
  async get(portId: string): Promise<StoredPort | null> {
    return decodePort(await this.redis.hgetall(this.keys.port(portId)));
  }

  /**
   * Resolves a device name as ML2 does (docs/neutron-provisioning-rules.md#update_device_up-and-update_device_down): an interface prefix (`tap`, `qvo`, `sg-`) is
   * stripped and the rest matched as the start of exactly one port id; a UUID-like name is taken as
   * the port id as it is (not looked up: the caller's script finds out whether it exists); anything
   * else is tried as a MAC address (with `[mac, pci_slot]`, the port whose binding profile has that
   * `pci_slot`), then as the start of a port id.
   * @returns the port id, or null when no single port matches
   */
  async resolveDevice(device: string | readonly [string, string | null]): Promise<string | null> {
    const [name, pciSlot] = typeof device === 'string' ? [device, null] : device;
    for (const prefix of INTERFACE_PREFIXES) {
      if (name.startsWith(prefix)) return this.byIdPrefix(name.slice(prefix.length));
    }
    // A full id is only ever a prefix of itself: no look-up needed (whether it exists is checked by
    // the script that uses it).
    if (isUuidLike(name)) return name;
    const byMac = await this.byMac(name, pciSlot);
    return byMac ?? this.byIdPrefix(name);
  }

  private async byIdPrefix(prefix: string): Promise<string | null> {
    if (prefix.length === 0) return null;
    const low = Buffer.from(`[${prefix}`);
    const high = Buffer.concat([Buffer.from(`[${prefix}`), Buffer.from([0xff])]);
    const matches = await this.redis.zrangebylex(this.keys.portIds, low, high, 'LIMIT', 0, 2);
    // As ML2's get_port: several matches are an error, treated as "not found".
    return matches.length === 1 ? matches[0]! : null;
  }

  private async byMac(macAddress: string, pciSlot: string | null): Promise<string | null> {
    const ids = (await this.redis.smembers(this.keys.portsByMac(macAddress))).sort();
    if (ids.length === 0) return null;
    if (!pciSlot) return ids[0]!;
    for (const id of ids) {
      const port = await this.get(id);
      if (port?.['binding:profile'].pci_slot === pciSlot) return id;
    }
    return null;
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
    const reply = String(
      await runScript(
        this.redis,
        portProvisionedScript,
        [
          this.keys.port(portId),
          this.keys.outbox,
          this.keys.blocks('port', portId),
          this.keys.handledEvent(eventId),
          this.keys.portsAwaitingActive,
        ],
        [handledTtlSeconds, ...this.newEventArgs(), triggerEntity, lastAttempt ? '1' : '0', portId],
      ),
    );
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
