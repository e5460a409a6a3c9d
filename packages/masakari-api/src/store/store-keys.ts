/**
 * The Redis keys of the Masakari store, all under `<deployment prefix>:masakari` (a test's own
 * prefix isolates it). Records are JSON strings; the indexes hold only live (not deleted) records.
 */
import { redisKey } from '@lifeguard/runtime';

export type SequenceKind = 'segment' | 'host' | 'notification' | 'vmove';

/** The store's key names for one deployment prefix. */
export class StoreKeys {
  readonly base: string;

  constructor(keyPrefix: string) {
    this.base = redisKey(keyPrefix, 'masakari');
  }

  /** Bumped by every write; a write applies only if nothing was written since its reads began. */
  get version(): string {
    return `${this.base}:version`;
  }
  /** INCR counter of a kind's integer ids. */
  sequence(kind: SequenceKind): string {
    return `${this.base}:sequence:${kind}`;
  }
  segment(uuid: string): string {
    return `${this.base}:segment:${uuid}`;
  }
  /** Sorted set of live segment uuids, scored by integer id. */
  get segments(): string {
    return `${this.base}:segments`;
  }
  /** Hash: live segment name → uuid (names are unique among live segments). */
  get segmentNames(): string {
    return `${this.base}:segment-names`;
  }
  host(uuid: string): string {
    return `${this.base}:host:${uuid}`;
  }
  /** Hash: live host name → uuid (names are unique among all live hosts, across segments). */
  get hostNames(): string {
    return `${this.base}:host-names`;
  }
  /** Sorted set of a segment's live host uuids, scored by integer id. */
  segmentHosts(segmentUuid: string): string {
    return `${this.base}:segment-hosts:${segmentUuid}`;
  }
  notification(uuid: string): string {
    return `${this.base}:notification:${uuid}`;
  }
  /** Sorted set of live notification uuids, scored by integer id. */
  get notifications(): string {
    return `${this.base}:notifications`;
  }
  vmove(uuid: string): string {
    return `${this.base}:vmove:${uuid}`;
  }
  /** Sorted set of a notification's vmove uuids, scored by integer id. */
  notificationVmoves(notificationUuid: string): string {
    return `${this.base}:notification-vmoves:${notificationUuid}`;
  }
  /**
   * Sorted set of the notifications of one host, type and payload (by its digest), scored by
   * generated time in microseconds: the duplicate check reads it.
   */
  duplicates(hostUuid: string, type: string, payloadDigest: string): string {
    return `${this.base}:duplicates:${hostUuid}:${type}:${payloadDigest}`;
  }
  /** Set of a host's notifications in new, running or error: its segment is "in use" while not empty. */
  unfinished(hostUuid: string): string {
    return `${this.base}:unfinished:${hostUuid}`;
  }
  /** Set of accepted notifications whose job is not known to be on the queue yet (an outbox). */
  get unqueued(): string {
    return `${this.base}:unqueued`;
  }
}
