import type { ComputeApi, Server } from '@lifeguard/openstack';
import type { Logger } from 'pino';
import { EVACUATION_LOCK_REASON } from './instance-evacuation-types.ts';
import { isNotFound } from './instance-reads.ts';

/**
 * The `locked_reason`s of an evacuation's lock: lifeguard's, and InstanceHA's (`instanceha-evacuation`),
 * left on a server by an InstanceHA evacuation that lifeguard takes over when a cloud switches from
 * InstanceHA in the middle of an incident (docs/instance-ha-rules.md#markers).
 */
const EVACUATION_LOCK_REASONS: ReadonlySet<string> = new Set([
  EVACUATION_LOCK_REASON,
  'instanceha-evacuation',
]);

/**
 * True when someone other than an evacuation locked the server: Nova shows it `locked` with a
 * `locked_reason` (microversion 2.73 and later) that is neither lifeguard's nor InstanceHA's evacuation
 * lock. Such a lock is kept: lifeguard neither locks the server over it (a lock replaces the reason)
 * nor unlocks it afterwards. Below 2.73 Nova gives no reason, so a lock cannot be told apart from
 * lifeguard's own and is treated as it.
 */
export function lockedByOthers(server: Server): boolean {
  return (
    server.locked === true &&
    server.locked_reason !== undefined &&
    !EVACUATION_LOCK_REASONS.has(server.locked_reason ?? '')
  );
}

/**
 * Locks the server for its evacuation (`lifeguard-evacuation`), unless someone else holds a lock on
 * it (lockedByOthers: logged, kept). A failed lock is logged and the evacuation goes on.
 * @returns `deleted` when Nova no longer has the server, else whether lifeguard's lock is on it
 */
export async function lockForEvacuation(
  compute: ComputeApi,
  server: Server,
  log: Logger,
): Promise<'deleted' | 'locked' | 'kept-others-lock' | 'not-locked'> {
  if (lockedByOthers(server)) {
    log.info(
      { lockedReason: server.locked_reason },
      `${server.id} is locked by someone else (reason: ${server.locked_reason}); evacuating it with that lock kept`,
    );
    return 'kept-others-lock';
  }
  try {
    await compute.lockServer(server.id, EVACUATION_LOCK_REASON);
    return 'locked';
  } catch (error) {
    if (isNotFound(error)) return 'deleted';
    log.warn({ err: error }, `could not lock ${server.id}; evacuating it anyway`);
    return 'not-locked';
  }
}

/**
 * Lifts lifeguard's lock: reads the server first and leaves a lock someone else holds
 * (lockedByOthers) or an unlocked server alone; ignores a deleted server; other failures are logged.
 * @param current the server as the caller read it last, when nothing was sent to Nova about it since
 *   (the instance loop's last look): used instead of reading it again, as it is no older than a read
 *   just before the unlock would be
 */
export async function unlockAfterEvacuation(
  compute: ComputeApi,
  instanceId: string,
  log: Logger,
  current: Server | null = null,
): Promise<void> {
  try {
    const server = current ?? (await compute.getServer(instanceId));
    if (server.locked === false || lockedByOthers(server)) return;
    await compute.unlockServer(instanceId);
  } catch (error) {
    if (!isNotFound(error)) log.warn({ err: error, instanceId }, `could not unlock ${instanceId}`);
  }
}
