export { type CliConfig, CliContext, cliConfigSchema, operatorName } from './cli-context.ts';
export { type CliIo, type OutputStream, processIo } from './cli-io.ts';
export { renderPortBlocks } from './commands/blocks.ts';
export { renderDeadLetters, renderReplay } from './commands/dead-letters.ts';
export { eventHosts, renderEvents } from './commands/events.ts';
export {
  configuredDeltaSeconds,
  confirmFenced,
  confirmFencedWarning,
} from './commands/host-confirm-fenced.ts';
export { rehabilitate } from './commands/host-rehabilitate.ts';
export { type HostView, hostViews, hostViewsOf, markerText, renderHosts } from './commands/hosts.ts';
export {
  incidentFenceText,
  renderIncident,
  renderIncidents,
  summariseEvent,
  type TimelineEntry,
  timeline,
} from './commands/incidents.ts';
export { renderSimState } from './commands/sim.ts';
export { renderStatus } from './commands/status.ts';
export {
  CliError,
  ConfirmationRequiredError,
  EXIT_FAILURE,
  EXIT_OK,
  EXIT_USAGE,
  HostIsReportingError,
  UsageError,
} from './errors.ts';
export { type FencingState, fencingAdvice } from './output/fencing-advice.ts';
export { formatAge, formatDuration, formatOffset, formatTime, truncate } from './output/format.ts';
export { Progress } from './output/progress.ts';
export { renderFields, renderTable } from './output/table.ts';
export { CLI_VERSION, createProgram, runCli } from './program.ts';
export { CloudSimControl, controlUrl, pickPartitionHosts } from './queries/cloud-sim-control.ts';
export {
  type DeadLetter,
  describeDeadLetter,
  listDeadLetters,
  purgeDeadLetters,
  type ReplayResult,
  replayDeadLetters,
  replayHeaders,
} from './queries/dead-letter-queue.ts';
export {
  describeStep,
  INCIDENT_IN_PROGRESS_STATES,
  NOVA_SERVICE_DOWN_TIME_SECONDS,
  planRehabilitation,
  type RehabilitationInput,
  type RehabilitationStep,
  type RehabilitationVerdict,
} from './queries/rehabilitation-plan.ts';
export {
  JOB_STATES,
  type SystemStatus,
  systemStatus,
  type WorkerKindStatus,
  workerKindStatuses,
} from './queries/system-status.ts';
