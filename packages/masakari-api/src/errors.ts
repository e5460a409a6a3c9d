/**
 * Typed errors of the Masakari store and API. Each carries the HTTP status Masakari answers with and
 * a message in Masakari's words (masakari/exception.py and masakari/ha/api.py, 14.0.2; the vmove
 * errors from master), so the API turns any of them into Masakari's fault envelope unchanged.
 */
import type { NotificationStatus } from './records.ts';

/** An error the API answers with its `status` and `message`. */
export class MasakariError extends Error {
  constructor(
    readonly status: 400 | 403 | 404 | 409,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class SegmentNotFoundError extends MasakariError {
  constructor(readonly segmentUuid: string) {
    super(404, `No failover segment with id ${segmentUuid}.`);
  }
}

export class HostNotFoundError extends MasakariError {
  constructor(readonly hostUuid: string) {
    super(404, `No host with id ${hostUuid}.`);
  }
}

/** A host uuid that names a host of another segment, or none. */
export class HostNotFoundUnderSegmentError extends MasakariError {
  constructor(
    readonly hostUuid: string,
    readonly segmentUuid: string,
  ) {
    super(404, `Host '${hostUuid}' under failover_segment '${segmentUuid}' could not be found.`);
  }
}

/** A notification's `hostname` names no host: 400, not 404, as Masakari answers. */
export class HostNotFoundByNameError extends MasakariError {
  constructor(readonly hostName: string) {
    super(400, `Host with name ${hostName} could not be found.`);
  }
}

export class NotificationNotFoundError extends MasakariError {
  constructor(readonly notificationUuid: string) {
    super(404, `No notification with id ${notificationUuid}.`);
  }
}

/** Vmoves asked of a notification that is not a COMPUTE_HOST one: 400, as Masakari 15 answers. */
export class NotificationWithoutVmovesError extends MasakariError {
  constructor(readonly notificationUuid: string) {
    super(400, `This notification ${notificationUuid} without vm moves.`);
  }
}

export class VmoveNotFoundError extends MasakariError {
  constructor(readonly vmoveUuid: string) {
    super(404, `No vm move with id ${vmoveUuid}.`);
  }
}

/** A `marker` that is no listed record's id: 400 in Masakari's list calls. */
export class MarkerNotFoundError extends MasakariError {
  constructor(readonly marker: string) {
    super(400, `Marker ${marker} could not be found.`);
  }
}

export class SegmentExistsError extends MasakariError {
  constructor(readonly segmentName: string) {
    super(409, `Failover segment with name ${segmentName} already exists.`);
  }
}

export class HostExistsError extends MasakariError {
  constructor(readonly hostName: string) {
    super(409, `Host with name ${hostName} already exists.`);
  }
}

/** A host name Nova does not know as a nova-compute service host. */
export class ComputeNotFoundByNameError extends MasakariError {
  constructor(readonly computeName: string) {
    super(400, `Compute service with name ${computeName} could not be found.`);
  }
}

/** The segment has a host with a notification in new, running or error. */
export class SegmentInUseError extends MasakariError {
  constructor(
    readonly segmentUuid: string,
    readonly action: 'update' | 'delete',
  ) {
    super(
      409,
      action === 'update'
        ? `Failover segment ${segmentUuid} can't be updated as it is in-use to process notifications.`
        : `Failover segment (${segmentUuid}) can't be deleted as it is in-use to process notifications.`,
    );
  }
}

/** The host's segment has a host with a notification in new, running or error. */
export class HostInUseError extends MasakariError {
  constructor(
    readonly hostUuid: string,
    readonly action: 'update' | 'delete',
  ) {
    super(
      409,
      `Host ${hostUuid} can't be ${action === 'update' ? 'updated' : 'deleted'} as it is in-use to process notifications.`,
    );
  }
}

export class HostOnMaintenanceError extends MasakariError {
  constructor(
    readonly hostName: string,
    readonly type: string,
  ) {
    super(
      409,
      `Notification received from host ${hostName} of type '${type}' is ignored as the host is already under maintenance.`,
    );
  }
}

export class DuplicateNotificationError extends MasakariError {
  constructor(
    readonly hostName: string,
    readonly type: string,
  ) {
    super(409, `Notification received from host ${hostName} of type ${type} is duplicate.`);
  }
}

/** A status write the lifecycle does not allow (src/notification-lifecycle.ts). Not an API answer. */
export class NotificationStatusTransitionError extends Error {
  constructor(
    readonly notificationUuid: string,
    readonly from: NotificationStatus,
    readonly to: NotificationStatus,
  ) {
    super(`notification ${notificationUuid} is ${from}; it cannot become ${to}`);
    this.name = 'NotificationStatusTransitionError';
  }
}

/** A record read from Redis that fails its schema. */
export class MasakariRecordError extends Error {
  constructor(
    readonly key: string,
    readonly reason: string,
  ) {
    super(`the record at ${key} is not valid: ${reason}`);
    this.name = 'MasakariRecordError';
  }
}

/** A write that kept losing to concurrent writes (optimistic concurrency, retried many times). */
export class StoreContentionError extends Error {
  constructor(
    readonly operation: string,
    readonly attempts: number,
  ) {
    super(`${operation} lost to concurrent writes ${attempts} times in a row`);
    this.name = 'StoreContentionError';
  }
}
