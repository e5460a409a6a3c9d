import type { Server } from '@lifeguard/openstack';
import { serverTaskState } from './decide.ts';

/**
 * Seconds a landed instance is given to return to its original status (a stop or reset finishing),
 * counted from when it was first seen landed, even after EVACUATION_TIMEOUT (a job taken over late).
 */
export const RESTORE_GRACE_SECONDS = 60;

/** The status an evacuated instance must end in: its status before the failure (docs/instance-ha-rules.md#evacuation). */
export function expectedStatuses(originalStatus: string): ReadonlyArray<string> {
  switch (originalStatus) {
    case 'SHUTOFF':
      return ['SHUTOFF'];
    case 'ERROR':
      return ['ERROR'];
    case 'REBUILD':
      // Resumed mid-rebuild: the state before the failure is unknown; Nova keeps a stopped
      // instance stopped, so either is accepted as it is.
      return ['ACTIVE', 'SHUTOFF'];
    default:
      return ['ACTIVE'];
  }
}

/**
 * The status a server of a failed host is to end in once evacuated (its "original" status): the
 * status Nova shows, or the one a power action still pending on the dead host would have reached —
 * someone stopped an ACTIVE server (`os-stop`: task_state `powering-off`) or started a SHUTOFF one
 * (`os-start`: `powering-on`) after its host died, and the host never carried it out. The evacuation
 * carries the wish out on the new host instead of silently undoing it. Pure.
 */
export function intendedStatus(server: Pick<Server, 'status' | 'OS-EXT-STS:task_state'>): string {
  const task = server['OS-EXT-STS:task_state'] ?? null;
  if (server.status === 'ACTIVE' && task === 'powering-off') return 'SHUTOFF';
  if (server.status === 'SHUTOFF' && task === 'powering-on') return 'ACTIVE';
  return server.status;
}

/** The next step to bring a landed instance back to its original state. */
export type SettleAction =
  | { kind: 'settled' }
  /** A task is still running (rebuild finishing, powering off): look again later. */
  | { kind: 'wait' }
  /** It was SHUTOFF before: `os-stop` (InstanceHA's restore). */
  | { kind: 'stop' }
  /** It was ERROR before: `os-resetState` to `error`. */
  | { kind: 'reset-error' }
  | { kind: 'failed'; reason: string };

/**
 * Reads a landed server against its original status: settled when idle in the expected status;
 * SHUTOFF before and ACTIVE now → stop it; ERROR before and anything else now → reset it to error;
 * ACTIVE (or SHUTOFF) before and ERROR now → the rebuild failed; any other status while idle → failed
 * (for example ACTIVE before and SHUTOFF now, which lifeguard does not start again).
 */
export function settleAction(server: Server, originalStatus: string): SettleAction {
  if (serverTaskState(server) !== null) return { kind: 'wait' };
  const expected = expectedStatuses(originalStatus);
  if (expected.includes(server.status)) return { kind: 'settled' };
  if (expected.includes('ERROR')) return { kind: 'reset-error' };
  if (expected.includes('SHUTOFF') && server.status === 'ACTIVE') return { kind: 'stop' };
  if (server.status === 'REBUILD' || server.status === 'MIGRATING') return { kind: 'wait' };
  return {
    kind: 'failed',
    reason: `ended ${server.status} on ${server['OS-EXT-SRV-ATTR:host'] ?? 'an unknown host'}, expected ${expected.join(' or ')}`,
  };
}
