export { type CliConfig, CliContext, cliConfigSchema, operatorName } from './cli-context.ts';
export { type CliIo, type OutputStream, processIo } from './cli-io.ts';
export type { ContextProvider, LifeguardProgram } from './command-registration.ts';
export { renderPortBlocks } from './commands/blocks.ts';
export { renderDeadLetters, renderReplay } from './commands/dead-letters.ts';
export { eventHosts, renderEvents } from './commands/events.ts';
export { confirmFencedCommand, confirmFencedWarning } from './commands/host-confirm-fenced.ts';
export { rehabilitate } from './commands/host-rehabilitate.ts';
export { renderHosts } from './commands/hosts.ts';
export { renderIncident, renderIncidents, summariseEvent } from './commands/incidents.ts';
export { renderSimState } from './commands/sim.ts';
export { renderStatus } from './commands/status.ts';
export {
  CliError,
  ConfirmationRequiredError,
  EXIT_FAILURE,
  EXIT_OK,
  EXIT_USAGE,
  UsageError,
} from './errors.ts';
export { Progress } from './output/progress.ts';
export { renderReenableWaits } from './output/reenable-waits-section.ts';
export { renderFields, renderTable } from './output/table.ts';
export { renderTableView } from './output/table-view-text.ts';
export { CLI_VERSION, createProgram, runCli } from './program.ts';
export { CloudSimControl, controlUrl, pickPartitionHosts } from './queries/cloud-sim-control.ts';
