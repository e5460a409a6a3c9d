export { type HandlerContext, type HandlerResult, waitFor } from './handlers/handler.ts';
export { HostFailureHandler, type HostFailureOptions } from './handlers/host-failure.ts';
export { InstanceFailureHandler, type InstanceFailureOptions } from './handlers/instance-failure.ts';
export { ProcessFailureHandler, type ProcessFailureOptions } from './handlers/process-failure.ts';
export { MasakariEngine, type MasakariEngineOptions } from './masakari-engine.ts';
export { createMasakariEngineMetrics, type MasakariEngineMetrics } from './metrics.ts';
export {
  NotificationJob,
  type NotificationJobOptions,
  type NotificationJobResult,
} from './notification-job.ts';
export { incidentVmoves } from './rules/incident-vmoves.ts';
export {
  NOVA_COMPUTE_PROCESS,
  type NotificationAction,
  notificationAction,
  RESTARTED_VM_EVENTS,
} from './rules/notification-action.ts';
export {
  hostFailureStatus,
  instanceRestartStatus,
  type StatusVerdict,
  statusAfterAttempt,
} from './rules/notification-status.ts';
export {
  type PlacementStage,
  type RecoveryPlan,
  recoveryPlan,
  type SegmentHost,
} from './rules/recovery-method.ts';
export { type ReservedFlagHost, usedReservedHost } from './rules/used-reserved-host.ts';
export { type InstanceOutcomeEvent, type VmoveVerdict, vmoveVerdict } from './rules/vmove-status.ts';
export {
  loadMasakariEngineSettings,
  MASAKARI_ENGINE_MAX_STALLED_COUNT,
  type MasakariEngineSettings,
  masakariEngineSettingsSchema,
} from './settings.ts';
export { type VmoveSyncOptions, vmoveSync } from './vmove-sync.ts';
export { isoFromMasakari, pythonTimestamp, workflowDetail } from './workflow-details.ts';
