import type { RecoveryWorkflowDetail } from '@lifeguard/masakari-api';

/** Python's `str(datetime)`, as Masakari writes a progress line's time: `YYYY-MM-DD HH:MM:SS.ffffff`. */
export function pythonTimestamp(at: Date): string {
  return `${at.toISOString().slice(0, 23).replace('T', ' ')}000`;
}

/**
 * One `recovery_workflow_details` entry in Masakari's shape: a task's name, its state in taskflow's
 * words (RUNNING, SUCCESS, FAILURE) and one progress line.
 */
export function workflowDetail(
  name: string,
  state: 'RUNNING' | 'SUCCESS' | 'FAILURE' | 'SKIPPED',
  message: string,
  at: Date,
): RecoveryWorkflowDetail {
  const progress = state === 'RUNNING' ? 0.5 : 1;
  return {
    name,
    state,
    progress,
    progressDetails: [{ timestamp: pythonTimestamp(at), message, progress: progress.toFixed(1) }],
  };
}

/** A Masakari timestamp (`YYYY-MM-DDTHH:MM:SS.ffffff`, UTC, no zone) as an ISO 8601 UTC time. */
export function isoFromMasakari(timestamp: string): string {
  return new Date(`${timestamp.slice(0, 23)}Z`).toISOString();
}
