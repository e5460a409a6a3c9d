import type { ComputeApi, Server } from '@lifeguard/openstack';
import type { Logger } from 'pino';
import { InstanceEvacuationFailedError } from '../errors.ts';
import { serverHost } from './decide.ts';
import type {
  InstanceEvacuationProgress,
  InstanceEvacuationSettings,
  InstanceEvacuationTarget,
} from './instance-evacuation-types.ts';
import { sleep } from './interruptible-sleep.ts';
import { RESTORE_GRACE_SECONDS, settleAction } from './settle.ts';

/** What settling a landed instance uses: Nova, the evacuation's settings, and the restore request. */
export interface SettleDependencies {
  readonly compute: ComputeApi;
  readonly settings: Pick<InstanceEvacuationSettings, 'policy' | 'pollMilliseconds'>;
  /** `os-stop` or reset to `error` (failures logged, not thrown). */
  restore(instanceId: string, action: 'stop' | 'reset-error'): Promise<void>;
}

/**
 * Brings a landed instance back to its original state (SHUTOFF → `os-stop`, ERROR → reset) and waits
 * until Nova shows it, within EVACUATION_TIMEOUT but at least RESTORE_GRACE_SECONDS after it was seen
 * landed; each look is judged before the deadline.
 * @returns the server as this read it last, after its last request (null when it read nothing: the
 *   landed server was already in its original state)
 * @throws InstanceEvacuationFailedError when it ended in another state or the time ran out
 */
export async function settleLanded(
  deps: SettleDependencies,
  instance: {
    readonly target: InstanceEvacuationTarget;
    readonly landed: Server;
    readonly progress: InstanceEvacuationProgress;
    readonly signal: AbortSignal | undefined;
  },
): Promise<Server | null> {
  const { target, progress, signal } = instance;
  const started = progress.startedAt ? Date.parse(progress.startedAt) : Date.now();
  const deadline = Math.max(
    started + deps.settings.policy.timeoutSeconds * 1000,
    Date.now() + RESTORE_GRACE_SECONDS * 1000,
  );
  const failed = (reason: string) =>
    new InstanceEvacuationFailedError(target.instanceId, reason, progress.attempts, progress.novaRequestId);
  let server = instance.landed;
  let reread: Server | null = null;
  let requests = 0;
  for (;;) {
    const action = settleAction(server, target.originalStatus);
    if (action.kind === 'settled') return reread;
    if (action.kind === 'failed') throw failed(action.reason);
    if (Date.now() > deadline) {
      throw failed(`landed on ${serverHost(server)} but did not return to ${target.originalStatus} in time`);
    }
    if ((action.kind === 'stop' || action.kind === 'reset-error') && requests < 3) {
      requests++;
      await deps.restore(target.instanceId, action.kind);
      if (action.kind === 'reset-error') {
        server = await deps.compute.getServer(target.instanceId);
        reread = server;
        continue;
      }
    }
    await sleep(deps.settings.pollMilliseconds, target.instanceId, signal);
    server = await deps.compute.getServer(target.instanceId);
    reread = server;
  }
}

/** `os-stop` (was SHUTOFF) or reset to `error` (was ERROR); failures are logged, not thrown. */
export async function restoreOriginalState(
  compute: ComputeApi,
  instanceId: string,
  action: 'stop' | 'reset-error',
  log: Logger,
): Promise<void> {
  try {
    if (action === 'stop') await compute.stopServer(instanceId);
    else await compute.resetServerState(instanceId, 'error');
    log.info({ instanceId }, `Restoring ${instanceId} (${action})`);
  } catch (error) {
    log.warn({ err: error, instanceId }, `could not restore ${instanceId} (${action})`);
  }
}
