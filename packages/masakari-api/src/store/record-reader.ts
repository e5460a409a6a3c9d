/**
 * Reads the Masakari store's records from Redis, each parsed with its schema. Deleted records are
 * kept (soft delete) but read as absent here, as Masakari reads them.
 */
import type { RedisClient } from '@lifeguard/runtime';
import type { z } from 'zod';
import { MasakariRecordError } from '../errors.ts';
import { HostRecord, NotificationRecord, SegmentRecord, VmoveRecord } from '../records.ts';
import type { StoreKeys } from './store-keys.ts';

function parseRecord<S extends z.ZodType>(schema: S, key: string, body: string): z.infer<S> {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    throw new MasakariRecordError(key, `not JSON (${(error as Error).message})`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new MasakariRecordError(key, parsed.error.message);
  return parsed.data;
}

export class RecordReader {
  constructor(
    readonly redis: RedisClient,
    readonly keys: StoreKeys,
  ) {}

  private async read<S extends z.ZodType>(schema: S, key: string): Promise<z.infer<S> | null> {
    const body = await this.redis.get(key);
    if (body === null) return null;
    const record = parseRecord(schema, key, body);
    return (record as { deleted: boolean }).deleted ? null : record;
  }

  private async readMany<S extends z.ZodType>(schema: S, keys: ReadonlyArray<string>): Promise<z.infer<S>[]> {
    if (keys.length === 0) return [];
    const bodies = await this.redis.mget(...keys);
    const records: z.infer<S>[] = [];
    bodies.forEach((body, index) => {
      if (body === null) return;
      const record = parseRecord(schema, keys[index]!, body);
      if (!(record as { deleted: boolean }).deleted) records.push(record);
    });
    return records;
  }

  segment(uuid: string): Promise<SegmentRecord | null> {
    return this.read(SegmentRecord, this.keys.segment(uuid));
  }

  host(uuid: string): Promise<HostRecord | null> {
    return this.read(HostRecord, this.keys.host(uuid));
  }

  async hostByName(name: string): Promise<HostRecord | null> {
    const uuid = await this.redis.hget(this.keys.hostNames, name);
    return uuid === null ? null : this.host(uuid);
  }

  notification(uuid: string): Promise<NotificationRecord | null> {
    return this.read(NotificationRecord, this.keys.notification(uuid));
  }

  vmove(uuid: string): Promise<VmoveRecord | null> {
    return this.read(VmoveRecord, this.keys.vmove(uuid));
  }

  /** Every vmove of a notification, by integer id. */
  async notificationVmoves(notificationUuid: string): Promise<VmoveRecord[]> {
    const uuids = await this.redis.zrange(this.keys.notificationVmoves(notificationUuid), 0, -1);
    return this.readMany(
      VmoveRecord,
      uuids.map((uuid) => this.keys.vmove(uuid)),
    );
  }

  /** Every live segment, by integer id. */
  async segments(): Promise<SegmentRecord[]> {
    const uuids = await this.redis.zrange(this.keys.segments, 0, -1);
    return this.readMany(
      SegmentRecord,
      uuids.map((uuid) => this.keys.segment(uuid)),
    );
  }

  /** Every live host of a segment, reserved ones included, by integer id. */
  async segmentHosts(segmentUuid: string): Promise<HostRecord[]> {
    const uuids = await this.redis.zrange(this.keys.segmentHosts(segmentUuid), 0, -1);
    return this.readMany(
      HostRecord,
      uuids.map((uuid) => this.keys.host(uuid)),
    );
  }

  /** Every live notification, by integer id. */
  async notifications(): Promise<NotificationRecord[]> {
    const uuids = await this.redis.zrange(this.keys.notifications, 0, -1);
    return this.readMany(
      NotificationRecord,
      uuids.map((uuid) => this.keys.notification(uuid)),
    );
  }

  /** Whether any host of the segment has a notification in new, running or error. */
  async segmentInUse(segmentUuid: string): Promise<boolean> {
    const hostUuids = await this.redis.zrange(this.keys.segmentHosts(segmentUuid), 0, -1);
    for (const hostUuid of hostUuids) {
      if ((await this.redis.scard(this.keys.unfinished(hostUuid))) > 0) return true;
    }
    return false;
  }
}
