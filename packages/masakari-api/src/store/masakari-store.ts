/**
 * The store of Masakari's segments, hosts, notifications and vmoves in Redis, shared by the API worker and
 * the workers that process notifications. Reads skip soft-deleted records; every write goes through
 * versionedWrite, so concurrent writers (any number of processes) never break a uniqueness,
 * duplicate or in-use rule.
 */
import { createHash, randomUUID } from 'node:crypto';
import { defineRedisScripts, type RedisClient } from '@lifeguard/runtime';
import {
  HostNotFoundError,
  NotificationNotFoundError,
  NotificationStatusTransitionError,
} from '../errors.ts';
import { type AdmissionFacts, duplicateWindowStart, notificationRefusal } from '../notification-admission.ts';
import { FINAL_NOTIFICATION_STATUSES, notificationTransition } from '../notification-lifecycle.ts';
import type {
  HostRecord,
  NotificationRecord,
  NotificationStatus,
  NotificationType,
  RecoveryWorkflowDetail,
  SegmentRecord,
  VmoveFacts,
  VmoveRecord,
} from '../records.ts';
import { masakariTimestamp, type ParsedDateTime } from '../timestamps.ts';
import { RecordReader } from './record-reader.ts';
import { type SequenceKind, StoreKeys } from './store-keys.ts';
import { APPLY_IF_VERSION, versionedWrite, type WriteCommand } from './versioned-writes.ts';
import { recordVmoves } from './vmove-writes.ts';

/** Masakari's `duplicate_notification_detection_interval` default, in seconds. */
export const DEFAULT_DUPLICATE_DETECTION_SECONDS = 180;

export interface MasakariStoreOptions {
  redis: RedisClient;
  /** The deployment's (or a test's) Redis key prefix; the store's keys are under `<prefix>:masakari`. */
  keyPrefix: string;
  /** The clock of created_at/updated_at; the system clock by default. */
  now?: () => Date;
}

/** A notification as accepted by the API, validated. */
export interface NotificationInput {
  type: NotificationType;
  hostname: string;
  generatedTime: ParsedDateTime;
  payload: Record<string, string>;
}

/** Options of setNotificationStatus. */
export interface StatusWriteOptions {
  /** Entries to record, replacing those of the same `name`. */
  workflowDetails?: ReadonlyArray<RecoveryWorkflowDetail>;
  /** Write only if the notification is in one of these (a claim); otherwise return null. */
  onlyFrom?: ReadonlyArray<NotificationStatus>;
}

/** The digest of a payload, equal for payloads equal as dictionaries (keys in any order). */
export function payloadDigest(payload: Readonly<Record<string, string>>): string {
  const sorted = Object.keys(payload)
    .sort()
    .map((key) => [key, payload[key]]);
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex');
}

function upsertDetails(
  current: ReadonlyArray<RecoveryWorkflowDetail>,
  written: ReadonlyArray<RecoveryWorkflowDetail>,
): RecoveryWorkflowDetail[] {
  const details = [...current];
  for (const detail of written) {
    const index = details.findIndex((existing) => existing.name === detail.name);
    if (index < 0) details.push(detail);
    else details[index] = detail;
  }
  return details;
}

export class MasakariStore {
  readonly redis: RedisClient;
  readonly keys: StoreKeys;
  readonly read: RecordReader;
  readonly now: () => Date;

  constructor(options: MasakariStoreOptions) {
    this.redis = options.redis;
    this.keys = new StoreKeys(options.keyPrefix);
    this.read = new RecordReader(options.redis, this.keys);
    this.now = options.now ?? (() => new Date());
    defineRedisScripts(options.redis, [APPLY_IF_VERSION]);
  }

  /** The current time in Masakari's format. */
  timestamp(): string {
    return masakariTimestamp(this.now());
  }

  /** A new integer id of a kind (ids only grow; one lost to a refused write leaves a gap). */
  async nextId(kind: SequenceKind): Promise<number> {
    return this.redis.incr(this.keys.sequence(kind));
  }

  /** Runs a write decision against the store (see versionedWrite). */
  write<T>(
    operation: string,
    decide: () => Promise<{ commands: ReadonlyArray<WriteCommand>; result: T }>,
  ): Promise<T> {
    return versionedWrite(this.redis, this.keys.version, operation, decide);
  }

  /** A live segment by uuid, or null. */
  getSegment(uuid: string): Promise<SegmentRecord | null> {
    return this.read.segment(uuid);
  }

  /** A live host by uuid, or null. */
  getHost(uuid: string): Promise<HostRecord | null> {
    return this.read.host(uuid);
  }

  /** A live host by its name (Nova's compute service host), or null. */
  getHostByName(name: string): Promise<HostRecord | null> {
    return this.read.hostByName(name);
  }

  /** A live segment's hosts, reserved and on-maintenance ones included, by integer id. */
  listSegmentHosts(segmentUuid: string): Promise<HostRecord[]> {
    return this.read.segmentHosts(segmentUuid);
  }

  /** A notification by its `notification_uuid`, or null. */
  getNotification(uuid: string): Promise<NotificationRecord | null> {
    return this.read.notification(uuid);
  }

  /** Every notification, by integer id. */
  listNotifications(): Promise<NotificationRecord[]> {
    return this.read.notifications();
  }

  /** A vmove by uuid, or null. */
  getVmove(uuid: string): Promise<VmoveRecord | null> {
    return this.read.vmove(uuid);
  }

  /** A notification's vmoves, by integer id. */
  listVmoves(notificationUuid: string): Promise<VmoveRecord[]> {
    return this.read.notificationVmoves(notificationUuid);
  }

  /**
   * Creates or updates a COMPUTE_HOST notification's vmoves, one per instance (src/store/vmove-writes.ts);
   * facts already recorded change nothing.
   */
  recordVmoves(notificationUuid: string, moves: ReadonlyArray<VmoveFacts>): Promise<VmoveRecord[]> {
    return recordVmoves(this, notificationUuid, moves);
  }

  /**
   * Stores a new notification in status `new` as Masakari's API does (docs/masakari-api.md#10-what-notification-create-does-in-order):
   * @throws HostNotFoundByNameError (400) when no host has that name
   * @throws HostOnMaintenanceError (409) when the host is on maintenance
   * @throws DuplicateNotificationError (409) when a notification of the same host, type and payload
   *   was generated at most `duplicateSeconds` before it (or any time after)
   */
  async createNotification(input: NotificationInput, duplicateSeconds: number): Promise<NotificationRecord> {
    const uuid = randomUUID();
    let id: number | undefined;
    return this.write('create notification', async () => {
      const facts: AdmissionFacts = {
        hostname: input.hostname,
        type: input.type,
        host: null,
        duplicate: null,
      };
      facts.host = await this.read.hostByName(input.hostname);
      const refusal = notificationRefusal(facts);
      if (refusal !== null) throw refusal;
      const host = facts.host!;
      const generated = input.generatedTime.epochMicroseconds;
      const duplicates = this.keys.duplicates(host.uuid, input.type, payloadDigest(input.payload));
      const since = duplicateWindowStart(generated, duplicateSeconds);
      facts.duplicate = (await this.redis.zrangebyscore(duplicates, since, '+inf', 'LIMIT', 0, 1)).length > 0;
      const duplicate = notificationRefusal(facts);
      if (duplicate !== null) throw duplicate;
      id ??= await this.nextId('notification');
      const record: NotificationRecord = {
        id,
        notificationUuid: uuid,
        type: input.type,
        generatedTime: input.generatedTime.timestamp,
        sourceHostUuid: host.uuid,
        payload: input.payload,
        status: 'new',
        recoveryWorkflowDetails: [],
        createdAt: this.timestamp(),
        updatedAt: null,
        deletedAt: null,
        deleted: false,
      };
      const commands: WriteCommand[] = [
        ['SET', this.keys.notification(uuid), JSON.stringify(record)],
        ['ZADD', this.keys.notifications, String(id), uuid],
        ['ZADD', duplicates, String(generated), uuid],
        ['SADD', this.keys.unfinished(host.uuid), uuid],
        ['SADD', this.keys.unqueued, uuid],
      ];
      return { commands, result: record };
    });
  }

  /**
   * Sets a notification's status (and records workflow details) as the lifecycle allows
   * (src/notification-lifecycle.ts). Writing the status it already has changes only the details, so a
   * redelivered job may repeat its writes.
   * @returns the notification as written, or null when `onlyFrom` is given and its status is not in it
   * @throws NotificationNotFoundError, NotificationStatusTransitionError
   */
  async setNotificationStatus(
    uuid: string,
    status: NotificationStatus,
    options: StatusWriteOptions = {},
  ): Promise<NotificationRecord | null> {
    return this.write(`set notification ${uuid} ${status}`, async () => {
      const current = await this.read.notification(uuid);
      if (current === null) throw new NotificationNotFoundError(uuid);
      if (options.onlyFrom !== undefined && !options.onlyFrom.includes(current.status))
        return { commands: [], result: null };
      const transition = notificationTransition(current.status, status);
      if (transition === 'refused') throw new NotificationStatusTransitionError(uuid, current.status, status);
      const details = options.workflowDetails ?? [];
      if (transition === 'unchanged' && details.length === 0) return { commands: [], result: current };
      const record: NotificationRecord = {
        ...current,
        status,
        recoveryWorkflowDetails: upsertDetails(current.recoveryWorkflowDetails, details),
        updatedAt: this.timestamp(),
      };
      const commands: WriteCommand[] = [['SET', this.keys.notification(uuid), JSON.stringify(record)]];
      if (FINAL_NOTIFICATION_STATUSES.includes(status))
        commands.push(['SREM', this.keys.unfinished(current.sourceHostUuid), uuid]);
      return { commands, result: record };
    });
  }

  /**
   * Sets a host's `on_maintenance` and/or `reserved`, as Masakari's engine does during a recovery
   * (no in-use check: the engine's own notification keeps the segment in use).
   * @throws HostNotFoundError
   */
  async setHostFlags(
    hostUuid: string,
    flags: { onMaintenance?: boolean; reserved?: boolean },
  ): Promise<HostRecord> {
    return this.write(`set host ${hostUuid} flags`, async () => {
      const current = await this.read.host(hostUuid);
      if (current === null) throw new HostNotFoundError(hostUuid);
      const record: HostRecord = {
        ...current,
        onMaintenance: flags.onMaintenance ?? current.onMaintenance,
        reserved: flags.reserved ?? current.reserved,
      };
      if (record.onMaintenance === current.onMaintenance && record.reserved === current.reserved)
        return { commands: [], result: current };
      record.updatedAt = this.timestamp();
      return { commands: [['SET', this.keys.host(hostUuid), JSON.stringify(record)]], result: record };
    });
  }

  /** Accepted notifications whose job may not be on the queue yet. */
  unqueuedNotifications(): Promise<string[]> {
    return this.redis.smembers(this.keys.unqueued);
  }

  /** Records that a notification's job is on the queue. */
  async markQueued(uuid: string): Promise<void> {
    await this.redis.srem(this.keys.unqueued, uuid);
  }
}
