export {
  type BooleanKey,
  type ConfigKey,
  INSTANCE_HA_KEYS,
  type InstanceHaKeyName,
  type InstanceHaLogLevel,
  type IntegerKey,
  LIFEGUARD_BOOLEAN_KEYS,
  LIFEGUARD_INTEGER_KEYS,
  LIFEGUARD_KEYS,
  LIFEGUARD_LIST_KEYS,
  type ListKey,
  LOG_LEVELS,
  type PathKey,
  PORT_KEYS,
  type PortKeyName,
  type StringKey,
  UNUSED_INSTANCE_HA_KEYS,
} from './config/config-keys.ts';
export {
  INSTANCE_HA_CONSTANTS,
  migrationWindowMinutes,
  POLL_RETRY_JITTER,
  perHostEvacuationConcurrency,
  pollRetrySeconds,
  processingExpirySeconds,
} from './config/derived.ts';
export {
  type ConfigValueSource,
  type ConfigWarning,
  DEFAULT_CONFIG_PATH,
  type InstanceHaConfig,
  type LoadedInstanceHaConfig,
  type LoadInstanceHaConfigOptions,
  loadInstanceHaConfig,
} from './config/instance-ha-config.ts';
export { likelyMeant, misspelledKeyWarnings } from './config/key-suggestions.ts';
export { logConfigWarnings } from './config/log-config-warnings.ts';
export { TRUE_STRINGS } from './config/values.ts';
export {
  IncidentClosedError,
  IncidentNotFencedError,
  IncidentNotFoundError,
  IncidentRecordError,
  NoOpenIncidentError,
} from './errors.ts';
export { EvacuabilityCache, loadEvacuabilityContext } from './evacuable/evacuability-context.ts';
export {
  type AggregateFilterResult,
  type EvacuabilityContext,
  type EvacuableFlavors,
  evacuableFlavors,
  evacuableImageIds,
  type FlavorWithExtraSpecs,
  filterHostsByEvacuableAggregates,
  hasEvacuableKey,
  hostsInEvacuableAggregates,
  isEvacuableAggregate,
  isEvacuableFlavor,
  isEvacuableImage,
  isServerEvacuable,
  taggingInEffect,
  withExtraSpecs,
} from './evacuable/evacuable-tags.ts';
export { ExcludedProjects } from './evacuable/excluded-projects.ts';
export {
  EVACUABLE_STATUSES,
  type ExcludedServer,
  type InstanceSelection,
  type InstanceSelectionOptions,
  RESUME_EXTRA_STATUSES,
  selectInstances,
} from './evacuable/select-instances.ts';
export {
  type ExcludableServer,
  type MetadataMatch,
  parseMetadataMatch,
  type ServerExclusion,
  type ServerExclusionReason,
  type ServerExclusionRules,
  serverExclusion,
} from './evacuable/server-exclusions.ts';
export { fnmatchCase } from './evacuable/server-name-filter.ts';
export {
  ACTION_GATES,
  aggregateLimitGate,
  disabledGate,
  heartbeatGate,
  hostDownGate,
} from './gates/action-gates.ts';
export { admit } from './gates/admission/admission.ts';
export {
  ADMISSION_GATE_ORDER,
  type AdmissionCandidates,
  type AdmissionDecision,
  type AdmissionGateName,
  type AdmittedHost,
  type BlockedHosts,
  CandidateFactsMissingError,
  type CycleStop,
} from './gates/admission/admission-decision.ts';
export type {
  AdmissionConfig,
  AdmissionSnapshot,
  CandidateFacts,
} from './gates/admission/admission-snapshot.ts';
export { AdmissionSummary, admissionSummaryOf, FailedPoll } from './gates/admission/admission-summary.ts';
export { AdmissionSummaryStore } from './gates/admission/admission-summary-store.ts';
export { type AllServicesStaleResult, allServicesStale } from './gates/admission/all-services-stale-gate.ts';
export {
  type Candidate,
  type DeduplicationInput,
  type DeduplicationResult,
  type DroppedHost,
  deduplicate,
  needsAnnouncement,
} from './gates/admission/deduplication-gate.ts';
export { admissionCandidates, hostsToRead } from './gates/admission/early-gates.ts';
export {
  type EvacuabilityFacts,
  type EvacuabilityResult,
  judgeEvacuability,
  type NotEvacuableReason,
} from './gates/admission/evacuability-gate.ts';
export {
  type HeartbeatCliffState,
  type HeartbeatGateInput,
  type HeartbeatGateResult,
  type HeartbeatGateSettings,
  type HeartbeatJudgement,
  INITIAL_HEARTBEAT_CLIFF,
  judgeHeartbeats,
} from './gates/admission/heartbeat-cliff-gate.ts';
export {
  judgeKdumpWaits,
  type KdumpClock,
  type KdumpClockUpdate,
  type KdumpGateResult,
} from './gates/admission/kdump-gate.ts';
export {
  type HeldHost,
  type HoldDownJudgement,
  judgeMassEventHoldDown,
  MASS_EVENT_GATES,
  type MassEventGate,
  type MassEventHold,
  type MassEventHolds,
  NO_MASS_EVENT_HOLDS,
  nextMassEventHolds,
} from './gates/admission/mass-event-hold-down-gate.ts';
export { MassEventHoldStore } from './gates/admission/mass-event-hold-store.ts';
export { applyRateLimit } from './gates/admission/rate-limit-gate.ts';
export {
  judgeSchedulers,
  type SchedulerFacts,
  type SchedulerJudgement,
} from './gates/admission/scheduler-gate.ts';
export { judgeAggregateLimits } from './gates/aggregate-impact.ts';
export {
  AGGREGATE_MAX_FAILURES_KEY,
  type AggregateHeadroom,
  type AggregateLimitResult,
  type AggregateTrip,
  aggregateLimitHeadroom,
  aggregateMaxFailures,
  evaluateAggregateLimits,
} from './gates/aggregate-limit.ts';
export { type CapacityFacts, type CapacityJudgement, judgeCapacity } from './gates/capacity-gate.ts';
export { type GateJudgement, type GateRun, type GateVerdict, type HostGate, runGates } from './gates/gate.ts';
export type { GateConfig, GateSnapshot } from './gates/gate-snapshot.ts';
export {
  type GateSnapshotSources,
  heartbeatTimesKey,
  type ReadGateSnapshot,
  readGateSnapshot,
} from './gates/gate-snapshot-reader.ts';
export { sendsHeartbeats } from './gates/heartbeat-rule.ts';
export { type HostReports, judgeHostReports } from './gates/host-reports.ts';
export { impactedHosts, impactedIncidentHosts, isImpacted } from './gates/impacted-hosts.ts';
export { serviceOfHost } from './gates/service-of-host.ts';
export {
  type CycleImpact,
  type ThresholdGate,
  type ThresholdJudgement,
  thresholdGate,
  thresholdScope,
} from './gates/threshold-gate.ts';
export { hostAgentKeys, readHostAgentEvidence } from './host-agents/host-agent-evidence-reader.ts';
export {
  type HostAgentCliff,
  type HostAgentCliffSettings,
  type HostAgentFailures,
  hostAgentCliff,
  hostAgentFailures,
} from './host-agents/host-agent-failures.ts';
export {
  type HostAgentEvidence,
  type HostAgentFinding,
  hostAgentFindings,
  lastHeartbeatPerHost,
} from './host-agents/host-agent-findings.ts';
export {
  CLOCK_TOLERANCE_SECONDS,
  type HostAgentSilence,
  type HostAgentSilenceInput,
  type HostAgentSilenceSettings,
  judgeHostAgentSilence,
  novaReportOverdueSeconds,
} from './host-agents/host-agent-silence.ts';
export {
  COMPUTE_PROCESS,
  type ProcessFailureAction,
  processFailureActions,
} from './host-agents/process-failure.ts';
export {
  FENCED_STATES,
  FenceRecord,
  Incident,
  IncidentState,
  STATE_ORDER,
} from './incidents/incident.ts';
export { newIncidentId } from './incidents/incident-id.ts';
export {
  CLOSED_INCIDENT_RETENTION_SECONDS,
  IncidentStore,
  type OpenIncidentInput,
  RECENT_INCIDENTS_KEPT,
} from './incidents/incident-store.ts';
export { type IncidentToRestore, planRebuild, type RebuildPlan } from './incidents/rebuild-plan.ts';
export { canonicalAddress } from './kdump/address.ts';
export {
  KdumpListener,
  type KdumpListenerCounts,
  type KdumpListenerOptions,
  type ReverseLookup,
} from './kdump/kdump-listener.ts';
export {
  encodeKdumpPacket,
  FENCE_KDUMP_MAGIC,
  FENCE_KDUMP_MESSAGE_BYTES,
  FENCE_KDUMP_VERSION,
  type KdumpPacket,
  type KdumpRejection,
  parseKdumpPacket,
} from './kdump/kdump-packet.ts';
export { KdumpStore } from './kdump/kdump-store.ts';
export { type KdumpStep, KdumpWait, type KdumpWaitOutcome } from './kdump/kdump-wait.ts';
export {
  currentWaitStart,
  decideKdump,
  type KdumpClockChange,
  type KdumpClockHost,
  type KdumpDecision,
  type KdumpWaitObservation,
  kdumpClockChange,
  kdumpClocksToSettle,
  kdumpWaitRemainingMilliseconds,
} from './kdump/kdump-wait-state.ts';
export {
  DISABLED_REASON_MAXIMUM_LENGTH,
  type DisabledReasonMarker,
  formatDisabledReason,
  type MarkerInput,
  type MarkerKind,
  type MarkerOrigin,
  parseDisabledReason,
  type WritableMarkerKind,
} from './markers/disabled-reason.ts';
export { MonitorReport, MonitorReportVerdict } from './monitor-reports/monitor-report.ts';
export {
  judgeMonitorReport,
  type MonitorReportJudgement,
  type MonitorReportSettings,
} from './monitor-reports/monitor-report-rule.ts';
export {
  MONITOR_REPORT_VERDICT_TTL_SECONDS,
  MonitorReportStore,
} from './monitor-reports/monitor-report-store.ts';
export {
  PLACEMENT_METHODS,
  PlacementDirective,
  PlacementMethod,
  PlacementOutcome,
} from './placement/placement-directive.ts';
export {
  PLACEMENT_DIRECTIVE_TTL_SECONDS,
  PLACEMENT_OUTCOME_TTL_SECONDS,
  PlacementDirectiveStore,
} from './placement/placement-directive-store.ts';
export { type LeaveDisabledInput, leftDisabled } from './recovery/leave-disabled.ts';
export { migrationsInProgress, TERMINAL_MIGRATION_STATUSES } from './recovery/migrations-in-progress.ts';
export {
  type ForcedDownRefusal,
  ReenableWait,
  ReenableWaits,
  waitingSeconds,
  waitToAnnounce,
} from './recovery/reenable-waits.ts';
export {
  type Categorisation,
  type CategoriseOptions,
  categoriseServices,
  type FailureReason,
  type FreshFailure,
  type OpenIncidentSummary,
  type ServiceView,
  type SkippedService,
  toServiceView,
} from './services/categorise.ts';
export { enableService } from './services/enable-service.ts';
export { LatestHostTimes } from './services/latest-host-times.ts';
export { parseNovaTimestamp } from './services/nova-time.ts';
export { shortHostname } from './services/short-hostname.ts';
export { suspectServices } from './services/suspect-services.ts';
export {
  evaluateThreshold,
  type ThresholdInput,
  type ThresholdResult,
  thresholdOfServiceListing,
} from './services/threshold.ts';
