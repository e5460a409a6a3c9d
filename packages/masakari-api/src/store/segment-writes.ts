/**
 * Creating, updating and deleting failover segments and their hosts, with Masakari's rules
 * (docs/masakari-api.md#9-errors): names unique among live records (host names across segments), no
 * update or delete while the segment is in use by a new, running or error notification, soft delete
 * (a deleted segment takes its hosts with it).
 */
import { randomUUID } from 'node:crypto';
import {
  HostExistsError,
  HostInUseError,
  HostNotFoundUnderSegmentError,
  SegmentExistsError,
  SegmentInUseError,
  SegmentNotFoundError,
} from '../errors.ts';
import type { HostRecord, RecoveryMethod, SegmentRecord } from '../records.ts';
import type { MasakariStore } from './masakari-store.ts';
import type { WriteCommand } from './versioned-writes.ts';

export interface SegmentFields {
  name: string;
  description: string | null;
  serviceType: string;
  recoveryMethod: RecoveryMethod;
  enabled: boolean;
}

export interface HostFields {
  name: string;
  type: string | null;
  controlAttributes: string;
  reserved: boolean;
  onMaintenance: boolean;
}

/** Checks a host name against Nova before it is stored (throws ComputeNotFoundByNameError). */
export type HostNameCheck = (name: string) => Promise<void>;

export class SegmentWrites {
  constructor(readonly store: MasakariStore) {}

  private get keys() {
    return this.store.keys;
  }

  /** Whether a live record already has `name` in a name index (segment names, host names). */
  private async nameTaken(index: string, name: string): Promise<boolean> {
    return (await this.store.redis.hget(index, name)) !== null;
  }

  /** The commands that move a record's entry in a name index from its old name to its new one. */
  private rename(index: string, from: string, to: string, uuid: string): WriteCommand[] {
    return [
      ['HDEL', index, from],
      ['HSET', index, to, uuid],
    ];
  }

  private async segmentOrThrow(uuid: string): Promise<SegmentRecord> {
    const segment = await this.store.read.segment(uuid);
    if (segment === null) throw new SegmentNotFoundError(uuid);
    return segment;
  }

  private async hostOrThrow(segmentUuid: string, hostUuid: string): Promise<HostRecord> {
    const host = await this.store.read.host(hostUuid);
    if (host === null || host.failoverSegmentId !== segmentUuid)
      throw new HostNotFoundUnderSegmentError(hostUuid, segmentUuid);
    return host;
  }

  /** @throws SegmentExistsError */
  async createSegment(fields: SegmentFields): Promise<SegmentRecord> {
    const uuid = randomUUID();
    let id: number | undefined;
    return this.store.write('create segment', async () => {
      if (await this.nameTaken(this.keys.segmentNames, fields.name))
        throw new SegmentExistsError(fields.name);
      id ??= await this.store.nextId('segment');
      const record: SegmentRecord = {
        id,
        uuid,
        ...fields,
        createdAt: this.store.timestamp(),
        updatedAt: null,
        deletedAt: null,
        deleted: false,
      };
      const commands: WriteCommand[] = [
        ['SET', this.keys.segment(uuid), JSON.stringify(record)],
        ['ZADD', this.keys.segments, String(id), uuid],
        ['HSET', this.keys.segmentNames, fields.name, uuid],
      ];
      return { commands, result: record };
    });
  }

  /** @throws SegmentNotFoundError, SegmentInUseError, SegmentExistsError */
  async updateSegment(uuid: string, changes: Partial<SegmentFields>): Promise<SegmentRecord> {
    return this.store.write(`update segment ${uuid}`, async () => {
      const current = await this.segmentOrThrow(uuid);
      if (await this.store.read.segmentInUse(uuid)) throw new SegmentInUseError(uuid, 'update');
      const record: SegmentRecord = { ...current, ...changes, updatedAt: this.store.timestamp() };
      const commands: WriteCommand[] = [['SET', this.keys.segment(uuid), JSON.stringify(record)]];
      if (record.name !== current.name) {
        if (await this.nameTaken(this.keys.segmentNames, record.name))
          throw new SegmentExistsError(record.name);
        commands.push(...this.rename(this.keys.segmentNames, current.name, record.name, uuid));
      }
      return { commands, result: record };
    });
  }

  /** Soft-deletes the segment and its hosts. @throws SegmentNotFoundError, SegmentInUseError */
  async deleteSegment(uuid: string): Promise<void> {
    await this.store.write(`delete segment ${uuid}`, async () => {
      const current = await this.segmentOrThrow(uuid);
      if (await this.store.read.segmentInUse(uuid)) throw new SegmentInUseError(uuid, 'delete');
      const now = this.store.timestamp();
      const deleted = { ...current, deleted: true, deletedAt: now };
      const commands: WriteCommand[] = [
        ['SET', this.keys.segment(uuid), JSON.stringify(deleted)],
        ['ZREM', this.keys.segments, uuid],
        ['HDEL', this.keys.segmentNames, current.name],
      ];
      for (const host of await this.store.read.segmentHosts(uuid))
        commands.push(...this.hostDeletion(host, now));
      commands.push(['DEL', this.keys.segmentHosts(uuid)]);
      return { commands, result: undefined };
    });
  }

  private hostDeletion(host: HostRecord, now: string): WriteCommand[] {
    const deleted = { ...host, deleted: true, deletedAt: now };
    return [
      ['SET', this.keys.host(host.uuid), JSON.stringify(deleted)],
      ['ZREM', this.keys.segmentHosts(host.failoverSegmentId), host.uuid],
      ['HDEL', this.keys.hostNames, host.name],
    ];
  }

  /**
   * Adds a host to a segment; `checkName` asks Nova whether the name is a compute service host.
   * @throws SegmentNotFoundError, ComputeNotFoundByNameError (from checkName), HostExistsError
   */
  async createHost(segmentUuid: string, fields: HostFields, checkName: HostNameCheck): Promise<HostRecord> {
    await this.segmentOrThrow(segmentUuid);
    await checkName(fields.name);
    const uuid = randomUUID();
    let id: number | undefined;
    return this.store.write('create host', async () => {
      await this.segmentOrThrow(segmentUuid);
      if (await this.nameTaken(this.keys.hostNames, fields.name)) throw new HostExistsError(fields.name);
      id ??= await this.store.nextId('host');
      const record: HostRecord = {
        id,
        uuid,
        failoverSegmentId: segmentUuid,
        ...fields,
        createdAt: this.store.timestamp(),
        updatedAt: null,
        deletedAt: null,
        deleted: false,
      };
      const commands: WriteCommand[] = [
        ['SET', this.keys.host(uuid), JSON.stringify(record)],
        ['ZADD', this.keys.segmentHosts(segmentUuid), String(id), uuid],
        ['HSET', this.keys.hostNames, fields.name, uuid],
      ];
      return { commands, result: record };
    });
  }

  /**
   * @throws HostNotFoundUnderSegmentError, HostInUseError, ComputeNotFoundByNameError (from
   *   checkName, when the name changes), HostExistsError
   */
  async updateHost(
    segmentUuid: string,
    hostUuid: string,
    changes: Partial<HostFields>,
    checkName: HostNameCheck,
  ): Promise<HostRecord> {
    let checkedName: string | undefined;
    return this.store.write(`update host ${hostUuid}`, async () => {
      const current = await this.hostOrThrow(segmentUuid, hostUuid);
      if (await this.store.read.segmentInUse(segmentUuid)) throw new HostInUseError(hostUuid, 'update');
      if (changes.name !== undefined && checkedName !== changes.name) {
        await checkName(changes.name);
        checkedName = changes.name;
      }
      const record: HostRecord = { ...current, ...changes, updatedAt: this.store.timestamp() };
      const commands: WriteCommand[] = [['SET', this.keys.host(hostUuid), JSON.stringify(record)]];
      if (record.name !== current.name) {
        if (await this.nameTaken(this.keys.hostNames, record.name)) throw new HostExistsError(record.name);
        commands.push(...this.rename(this.keys.hostNames, current.name, record.name, hostUuid));
      }
      return { commands, result: record };
    });
  }

  /** Soft-deletes a host. @throws HostNotFoundUnderSegmentError, HostInUseError */
  async deleteHost(segmentUuid: string, hostUuid: string): Promise<void> {
    await this.store.write(`delete host ${hostUuid}`, async () => {
      const current = await this.hostOrThrow(segmentUuid, hostUuid);
      if (await this.store.read.segmentInUse(segmentUuid)) throw new HostInUseError(hostUuid, 'delete');
      return { commands: this.hostDeletion(current, this.store.timestamp()), result: undefined };
    });
  }
}
