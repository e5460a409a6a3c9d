/**
 * The records of Masakari's v1 resources as lifeguard keeps them in Redis: failover segments, hosts
 * and notifications (docs/masakari-api.md#6-representations). Field names are Masakari's, in camel
 * case; the API's views turn them back into Masakari's JSON keys. Every timestamp is written in
 * Masakari's format, UTC with microseconds and no zone (`2026-01-02T03:04:05.678901`), so that
 * timestamps compare as strings.
 */
import { z } from 'zod';

/** A time in Masakari's format: `YYYY-MM-DDTHH:MM:SS.ffffff`, UTC, no zone designator. */
export const MasakariTimestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/, 'must be YYYY-MM-DDTHH:MM:SS.ffffff (UTC)');
export type MasakariTimestamp = z.infer<typeof MasakariTimestamp>;

/** A segment's `recovery_method`. */
export const RECOVERY_METHODS = ['auto', 'reserved_host', 'auto_priority', 'rh_priority'] as const;
export const RecoveryMethod = z.enum(RECOVERY_METHODS);
export type RecoveryMethod = z.infer<typeof RecoveryMethod>;

/** A notification's `type`. */
export const NOTIFICATION_TYPES = ['COMPUTE_HOST', 'VM', 'PROCESS'] as const;
export const NotificationType = z.enum(NOTIFICATION_TYPES);
export type NotificationType = z.infer<typeof NotificationType>;

/**
 * A notification's `status` (docs/masakari-api.md#11-notification-lifecycle-masakarienginemanagerpy): `new` not processed
 * yet, `running` in progress, `finished` done (nothing to do included), `error` failed once and to be
 * retried, `failed` failed for good or expired, `ignored` deliberately not acted on.
 */
export const NOTIFICATION_STATUSES = ['new', 'running', 'finished', 'error', 'failed', 'ignored'] as const;
export const NotificationStatus = z.enum(NOTIFICATION_STATUSES);
export type NotificationStatus = z.infer<typeof NotificationStatus>;

/** The fields every persistent Masakari object carries. */
const persistent = {
  /** The integer id (Masakari's database id); `marker` in list requests is this id. */
  id: z.number().int().positive(),
  createdAt: MasakariTimestamp,
  updatedAt: MasakariTimestamp.nullable(),
  deletedAt: MasakariTimestamp.nullable(),
  /** Soft delete: a deleted record is kept but no longer listed, shown or matched by name. */
  deleted: z.boolean(),
};

/** A failover segment. */
export const SegmentRecord = z.object({
  ...persistent,
  uuid: z.uuid(),
  name: z.string().min(1).max(255),
  description: z.string().nullable(),
  serviceType: z.string().min(1).max(255),
  recoveryMethod: RecoveryMethod,
  enabled: z.boolean(),
});
export type SegmentRecord = z.infer<typeof SegmentRecord>;

/** A host of a failover segment. `name` equals the host's nova-compute service host. */
export const HostRecord = z.object({
  ...persistent,
  uuid: z.uuid(),
  name: z.string().min(1).max(255),
  /** The `uuid` of the host's segment (Masakari's `failover_segment_id`). */
  failoverSegmentId: z.uuid(),
  type: z.string().max(255).nullable(),
  controlAttributes: z.string(),
  reserved: z.boolean(),
  onMaintenance: z.boolean(),
});
export type HostRecord = z.infer<typeof HostRecord>;

/** One progress line of a recovery task. */
export const RecoveryProgressDetail = z.object({
  /** Python's `str(datetime)` as Masakari shows it: `YYYY-MM-DD HH:MM:SS.ffffff`. */
  timestamp: z.string(),
  message: z.string(),
  /** The task's progress when the line was written, as a string (`'1.0'`). */
  progress: z.string(),
});
export type RecoveryProgressDetail = z.infer<typeof RecoveryProgressDetail>;

/**
 * One task of a notification's recovery (`recovery_workflow_details[]`), e.g. `{name:
 * 'StopInstanceTask', state: 'SUCCESS', progress: 1, progressDetails: [...]}`. Stored entries are
 * keyed by `name`: writing an entry with a name already present replaces it.
 */
export const RecoveryWorkflowDetail = z.object({
  name: z.string().min(1),
  /** The task's state in taskflow's words: PENDING, RUNNING, SUCCESS, FAILURE, REVERTED... */
  state: z.string().min(1),
  progress: z.number().min(0).max(1),
  progressDetails: z.array(RecoveryProgressDetail),
});
export type RecoveryWorkflowDetail = z.infer<typeof RecoveryWorkflowDetail>;

/** A notification, as accepted by `POST /v1/notifications`. */
export const NotificationRecord = z.object({
  ...persistent,
  notificationUuid: z.uuid(),
  type: NotificationType,
  /** The time the sender gave, in Masakari's format. */
  generatedTime: MasakariTimestamp,
  /** The `uuid` of the Masakari host whose name was the request's `hostname`. */
  sourceHostUuid: z.uuid(),
  /** The payload as sent (validated for its type at the API). */
  payload: z.record(z.string(), z.string()),
  status: NotificationStatus,
  recoveryWorkflowDetails: z.array(RecoveryWorkflowDetail),
});
export type NotificationRecord = z.infer<typeof NotificationRecord>;

/** A vmove's `type` (Masakari 15's VMoveType): lifeguard's recoveries only evacuate. */
export const VMOVE_TYPES = ['evacuation', 'migration', 'live_migration'] as const;
export const VmoveType = z.enum(VMOVE_TYPES);
export type VmoveType = z.infer<typeof VmoveType>;

/**
 * A vmove's `status` (Masakari 15's VMoveStatus): `pending` not moved yet, `ongoing` being moved,
 * `succeeded` moved, `failed` not moved, `ignored` left alone for some reason.
 */
export const VMOVE_STATUSES = ['pending', 'ongoing', 'succeeded', 'failed', 'ignored'] as const;
export const VmoveStatus = z.enum(VMOVE_STATUSES);
export type VmoveStatus = z.infer<typeof VmoveStatus>;

/** What is known of one instance's move, without the record's bookkeeping (ids, timestamps). */
export const VmoveFacts = z.object({
  instanceUuid: z.string().min(1),
  instanceName: z.string(),
  /** The host the instance was moved from (Nova's service host), when known. */
  sourceHost: z.string().nullable(),
  /** The host it runs on now, when known. */
  destHost: z.string().nullable(),
  startTime: MasakariTimestamp.nullable(),
  endTime: MasakariTimestamp.nullable(),
  type: VmoveType.nullable(),
  status: VmoveStatus.nullable(),
  message: z.string().nullable(),
});
export type VmoveFacts = z.infer<typeof VmoveFacts>;

/**
 * One instance moved by the recovery of a COMPUTE_HOST notification (Masakari 15's `vmoves` table,
 * microversion 1.3). `uuid` is vmoveUuid(notificationUuid, instanceUuid): the same on every write.
 */
export const VmoveRecord = z.object({
  ...persistent,
  uuid: z.uuid(),
  notificationUuid: z.uuid(),
  ...VmoveFacts.shape,
});
export type VmoveRecord = z.infer<typeof VmoveRecord>;

/** The BullMQ queue every accepted notification is put on. */
export const MASAKARI_NOTIFICATION_QUEUE = 'masakari-notification';
/** The name of the jobs on that queue. */
export const MASAKARI_NOTIFICATION_JOB_NAME = 'masakari-notification';

/**
 * Data of a job on `masakari-notification`; its id is
 * `masakariNotificationJobId(notificationUuid)` (`masakari-notification.<uuid>`).
 */
export const MasakariNotificationJob = z.object({ notificationUuid: z.uuid() }).strict();
export type MasakariNotificationJob = z.infer<typeof MasakariNotificationJob>;
