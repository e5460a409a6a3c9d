export {
  ComputeNotFoundByNameError,
  DuplicateNotificationError,
  HostExistsError,
  HostInUseError,
  HostNotFoundByNameError,
  HostNotFoundError,
  HostNotFoundUnderSegmentError,
  HostOnMaintenanceError,
  MarkerNotFoundError,
  MasakariError,
  MasakariRecordError,
  NotificationNotFoundError,
  NotificationStatusTransitionError,
  NotificationWithoutVmovesError,
  SegmentExistsError,
  SegmentInUseError,
  SegmentNotFoundError,
  StoreContentionError,
  VmoveNotFoundError,
} from './errors.ts';
export { MASAKARI_ENGINE_VARIABLES, MASAKARI_VARIABLES } from './masakari-variables.ts';
export { type AdmissionFacts, duplicateWindowStart, notificationRefusal } from './notification-admission.ts';
export {
  FINAL_NOTIFICATION_STATUSES,
  notificationTransition,
  type StatusTransition,
  UNFINISHED_NOTIFICATION_STATUSES,
} from './notification-lifecycle.ts';
export {
  HostRecord,
  MASAKARI_NOTIFICATION_JOB_NAME,
  MASAKARI_NOTIFICATION_QUEUE,
  MasakariNotificationJob,
  MasakariTimestamp,
  NOTIFICATION_STATUSES,
  NOTIFICATION_TYPES,
  NotificationRecord,
  NotificationStatus,
  NotificationType,
  RECOVERY_METHODS,
  RecoveryMethod,
  RecoveryProgressDetail,
  RecoveryWorkflowDetail,
  SegmentRecord,
  VMOVE_STATUSES,
  VMOVE_TYPES,
  VmoveFacts,
  VmoveRecord,
  VmoveStatus,
  VmoveType,
} from './records.ts';
export {
  DEFAULT_DUPLICATE_DETECTION_SECONDS,
  MasakariStore,
  type MasakariStoreOptions,
  type NotificationInput,
  payloadDigest,
  type StatusWriteOptions,
} from './store/masakari-store.ts';
export {
  type HostFields,
  type HostNameCheck,
  type SegmentFields,
  SegmentWrites,
} from './store/segment-writes.ts';
export { epochMicroseconds, masakariTimestamp, type ParsedDateTime, parseDateTime } from './timestamps.ts';
export { vmoveUuid } from './vmove-id.ts';
