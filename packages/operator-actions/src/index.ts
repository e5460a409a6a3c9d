export type { ActionConnections } from './action-connections.ts';
export {
  type ConfirmBeforeRecording,
  type ConfirmFencedOutcome,
  type ConfirmFencedRequest,
  configuredDeltaSeconds,
  confirmFenced,
} from './confirm-fenced/confirm-fenced.ts';
export {
  purgeDeadLetters,
  type ReplayResult,
  replayDeadLetters,
  replayHeaders,
} from './dead-letters/dead-letter-replay.ts';
export { HostIsReportingError, OperatorError } from './operator-error.ts';
export {
  type CheckedHost,
  checkRehabilitation,
  type RehabilitationGoAhead,
  RehabilitationRefusedError,
  rehabilitateHost,
} from './rehabilitation/host-rehabilitation.ts';
export {
  describeStep,
  INCIDENT_IN_PROGRESS_STATES,
  NOVA_SERVICE_DOWN_TIME_SECONDS,
  planRehabilitation,
  type RehabilitationInput,
  type RehabilitationStep,
  type RehabilitationVerdict,
} from './rehabilitation/rehabilitation-plan.ts';
export { QUIET_PROGRESS, type StepProgress } from './step-progress.ts';
