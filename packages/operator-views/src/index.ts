export { type DeadLetter, describeDeadLetter, type MessageHeaders } from './dead-letters/dead-letter.ts';
export {
  countDeadLetters,
  DEAD_LETTER_READ_CAP,
  type DeadLetterBatch,
  listDeadLetters,
  takeDeadLetters,
} from './dead-letters/dead-letter-queue.ts';
export { deadLettersTable } from './dead-letters/dead-letters-table.ts';
export { formatAge, formatDuration, formatOffset, formatTime, truncate } from './format.ts';
export {
  type HostReporting,
  judgeHostReporting,
  lastHeartbeat,
  lastHeartbeats,
} from './hosts/host-reporting.ts';
export { type HostView, hostViews, hostViewsOf, markerText } from './hosts/host-views.ts';
export {
  RESTART_HINT_AFTER_SECONDS,
  type ReenableWaitView,
  reenableWaitText,
  reenableWaitViews,
} from './hosts/reenable-waits.ts';
export { type CapacityHold, capacityHoldOf } from './incidents/capacity-hold.ts';
export { type FenceJobView, readFenceJob } from './incidents/fence-job.ts';
export { incidentFenceText } from './incidents/fence-text.ts';
export {
  type FencingAdviceKind,
  type FencingFacts,
  type FencingState,
  fencingAdvice,
  fencingAdviceOf,
} from './incidents/fencing-advice.ts';
export { readFencingFacts } from './incidents/fencing-facts.ts';
export { listIncidents } from './incidents/incident-listing.ts';
export {
  type IncidentTimeline,
  readIncidentTimeline,
  type TimelineEntry,
  timeline,
} from './incidents/incident-timeline.ts';
export { OperatorConnections, type OperatorConnectionsOptions } from './operator-connections.ts';
export { type AdmissionLine, admissionLines, capacityHoldLines } from './status/admission-lines.ts';
export {
  brokerQueuesTable,
  jobQueuesTable,
  leaderText,
  missingWorkerKindsText,
  workerKindsTable,
  workersTable,
} from './status/status-tables.ts';
export {
  type BrokerQueueDepth,
  brokerQueueDepths,
  JOB_STATES,
  type JobQueueDepth,
  type JobState,
  jobQueueDepths,
  probeReadiness,
  readSystemStatus,
  type SystemStatus,
  systemStatus,
  type WorkerKindStatus,
  type WorkerStatus,
  workerKindStatuses,
} from './status/system-status.ts';
export {
  type CellTone,
  cell,
  cellText,
  type TableCell,
  type TableColumn,
  type TableRow,
  type TableView,
} from './table-view.ts';
