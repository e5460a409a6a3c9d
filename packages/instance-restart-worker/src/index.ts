export { InstanceRestartFailedError } from './errors.ts';
export { InstanceRestartProcessor, type InstanceRestartProcessorDeps } from './instance-restart-processor.ts';
export { InstanceRestartWorker, type InstanceRestartWorkerOptions } from './instance-restart-worker.ts';
export { createInstanceRestartMetrics, type InstanceRestartMetrics, RESTART_OUTCOMES } from './metrics.ts';
export { InstanceMonitor, type InstanceMonitorOptions } from './monitor/instance-monitor.ts';
export {
  type InstanceMonitorSettings,
  instanceMonitorSettingsSchema,
  loadInstanceMonitorSettings,
} from './monitor/monitor-settings.ts';
export { checkVirsh, VIRSH_VARIABLE } from './monitor/virsh-check.ts';
export { type DomainEvent, LIFECYCLE_DETAILS, parseVirshEventLine } from './monitor/virsh-event-line.ts';
export { INSTANCE_RESTART_VARIABLES } from './own-variables.ts';
export {
  type InstanceRestartDecision,
  type InstanceRestartFacts,
  type InstanceRestartSettings,
  instanceRestartDecision,
  isHaEnabled,
  isMasakariInstanceFailure,
  MASAKARI_INSTANCE_EVENTS,
  OSLO_TRUE_STRINGS,
} from './policy/instance-restart-decision.ts';
export { RestartRecords } from './restart-records.ts';
export {
  INSTANCE_RESTART_MAX_STALLED_COUNT,
  type InstanceRestartWorkerSettings,
  instanceRestartSettingsSchema,
  loadInstanceRestartSettings,
} from './settings.ts';
