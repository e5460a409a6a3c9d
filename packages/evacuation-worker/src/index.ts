export {
  EvacuationInterruptedError,
  EvacuationJobLostError,
  InstanceEvacuationFailedError,
} from './errors.ts';
export { EvacuationWorker, type EvacuationWorkerOptions } from './evacuation-worker.ts';
export type { EventSink } from './event-sink.ts';
export type { HostEvacuationDependencies } from './host/host-dependencies.ts';
export { HostOutcome } from './host/host-outcome.ts';
export { type ChosenPlacement, HostPlacement } from './host/host-placement.ts';
export { HostEvacuationProcessor, MAX_TRANSIENT_FAILURES } from './host/host-processor.ts';
export { HostEvacuationState, HostStep, PlannedInstance, VerifyingInstance } from './host/host-state.ts';
export type { HostJob, HostStepContext } from './host/host-step-context.ts';
export { INSTANCE_JOB_OPTIONS, POWER_ON_JOB_OPTIONS } from './host/job-options.ts';
export { type HostPlan, planHostEvacuation } from './host/plan.ts';
export {
  type ClaimResult,
  RESERVED_HOST_CLAIM_SECONDS,
  ReservedHostClaims,
} from './host/reserved-host-claims.ts';
export { ReservedHostManager } from './host/reserved-host-manager.ts';
export { matchingReservedHosts, type ReservedHostMatching, reservedHostPool } from './host/reserved-hosts.ts';
export {
  checkEvacuationSafety,
  type HeartbeatTimesSource,
  heartbeatTimesSource,
  type SafetyVerdict,
} from './host/safety-checks.ts';
export {
  reservedHostUnusable,
  type SegmentPlacement,
  segmentPlacement,
  serviceNamed,
  type UnusableReservedHost,
} from './host/segment-placement.ts';
export { STOP_FLAG_SECONDS, StopFlags } from './host/stop-flags.ts';
export {
  CLOCK_SKEW_ALLOWANCE_SECONDS,
  decideInstance,
  describeServer,
  type InstanceDecision,
  latestEvacuation,
  MIGRATION_FAILED,
  MIGRATION_SUCCEEDED,
  type MigrationProgress,
  migrationProgress,
  novaTime,
} from './instances/decide.ts';
export { type EvacuateClaimVerdict, evacuateClaimVerdict } from './instances/evacuate-claim.ts';
export { EvacuateClaims } from './instances/evacuate-claims.ts';
export {
  evacuateTarget,
  retriesAfterNoValidHost,
  schedulerAfterRefusal,
} from './instances/evacuate-target.ts';
export {
  type HostRecheck,
  recheckHost,
  sharedHostRecheck,
  sharedWorldRead,
} from './instances/host-recheck.ts';
export {
  EVACUATION_LOCK_REASON,
  type InstanceEvacuationContext,
  type InstanceEvacuationProgress,
  type InstanceEvacuationResult,
  type InstanceEvacuationSettings,
  type InstanceEvacuationTarget,
  MAX_CONSECUTIVE_API_ERRORS,
  NO_PROGRESS,
} from './instances/instance-evacuation-types.ts';
export { InstanceEvacuator } from './instances/instance-evacuator.ts';
export { InstanceEvacuationProcessor } from './instances/instance-processor.ts';
export { type Look, notLanded } from './instances/instance-reads.ts';
export {
  type InstanceAction,
  type InstanceObservation,
  type InstanceSnapshot,
  type InstanceStep,
  nextInstanceAction,
  type Recording,
  type WaitReason,
} from './instances/next-instance-action.ts';
export {
  DEFAULT_RESTART_PRIORITY,
  type EvacuationPhase,
  orchestratedPhases,
  RESTART_GROUP_KEY,
  RESTART_PRIORITY_KEY,
  RESTART_PRIORITY_RANGE,
  restartGroup,
  restartPriority,
  singlePhase,
} from './instances/phases.ts';
export {
  expectedStatuses,
  intendedStatus,
  RESTORE_GRACE_SECONDS,
  type SettleAction,
  settleAction,
} from './instances/settle.ts';
export { sharedInFlight } from './instances/shared-in-flight.ts';
export { createEvacuationMetrics, type EvacuationMetrics, type GlobalCounts } from './metrics.ts';
export {
  type EvacuationPolicy,
  type EvacuationPolicyConfig,
  evacuationPolicy,
} from './policy/evacuation-policy.ts';
export { REENABLE_JOB_OPTIONS, startRecoveryIntake } from './recovery/recovery-intake.ts';
export { type ReenableJobResult, ReenableProcessor } from './recovery/reenable-processor.ts';
export {
  type ReenableInput,
  type ReenableStep,
  reenableStep,
  supersedingIncident,
} from './recovery/reenable-rules.ts';
export {
  type EvacuationWorkerEnvironment,
  type EvacuationWorkerSettings,
  evacuationMode,
  evacuationWorkerSettingsSchema,
  loadEvacuationWorkerEnvironment,
  loadEvacuationWorkerSettings,
  WORKER_ROLES,
  type WorkerRole,
} from './settings.ts';
