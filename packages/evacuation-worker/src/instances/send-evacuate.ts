import { type ComputeApi, NovaApiError, type Server } from '@lifeguard/openstack';
import type { Logger } from 'pino';
import { schedulerAfterRefusal } from './evacuate-target.ts';
import type { InstanceEvacuationContext, InstanceEvacuationTarget } from './instance-evacuation-types.ts';

/** What Nova answered an evacuate request: accepted, or refused with its status and message. */
export type EvacuateAnswer =
  | { ok: true; requestId: string | null }
  | { ok: false; requestId: string | null; message: string };

/**
 * One attempt's evacuate request to `host` (or the scheduler): a reserved host held but not yet in
 * service is put into service first (`prepareTarget`; when it cannot take servers the request goes to
 * the scheduler), and a refusal of a request with a host is sent again without it only where the
 * instance's use of its reserved host allows it (schedulerAfterRefusal).
 */
export async function evacuateAttempt(
  compute: ComputeApi,
  target: InstanceEvacuationTarget,
  host: string | null,
  context: Pick<InstanceEvacuationContext, 'prepareTarget'>,
  log: Logger,
): Promise<EvacuateAnswer> {
  let chosen = host;
  if (chosen !== null && context.prepareTarget !== undefined && !(await context.prepareTarget(chosen))) {
    log.warn(
      { targetHost: chosen },
      `Reserved host ${chosen} cannot take ${target.instanceId}; evacuating it without a target`,
    );
    chosen = null;
  }
  const fallback = schedulerAfterRefusal(target.targetHostUse ?? 'first-attempt');
  return sendEvacuate(compute, target, chosen, log, fallback);
}

/**
 * One evacuate request, with `host` when a reserved host is given; Nova's 409 or 500 for a request
 * with a host is retried once without it (the scheduler then picks) unless `withoutHostOnRefusal` is
 * false (a segment's reserved_host allows no other host). Logs `Evacuation accepted for
 * <id> (nova-req: <req-id>)` or the refusal.
 * @throws the Nova client's network errors, and NovaApiError 503 (a refusal is an answer, not an
 *   error; a 503 that outlived the client's own retries is not one: the API did not handle the
 *   request, docs/openstack.md#4-timeouts-retries-and-errors). The instance job is then retried
 *   later, from a fresh look at the server, and the attempt is not counted as a failed evacuation.
 */
export async function sendEvacuate(
  compute: ComputeApi,
  target: InstanceEvacuationTarget,
  host: string | null,
  log: Logger,
  withoutHostOnRefusal = true,
): Promise<EvacuateAnswer> {
  try {
    const info = await compute.evacuate(target.instanceId, host ? { host } : {});
    log.info(
      { novaRequestId: info.requestId, targetHost: host },
      `Evacuation accepted for ${target.instanceId} (nova-req: ${info.requestId ?? 'none'})`,
    );
    return { ok: true, requestId: info.requestId };
  } catch (error) {
    if (!(error instanceof NovaApiError) || error.status === 503) throw error;
    log.warn(
      { novaRequestId: error.requestId, status: error.status, targetHost: host },
      `Evacuation refused for ${target.instanceId} (nova-req: ${error.requestId ?? 'none'}): ${error.apiMessage}`,
    );
    if (host !== null && withoutHostOnRefusal && (error.status === 409 || error.status === 500)) {
      return sendEvacuate(compute, target, null, log);
    }
    return { ok: false, requestId: error.requestId, message: `HTTP ${error.status}: ${error.apiMessage}` };
  }
}

/**
 * Resets a server to `error` before it is evacuated (`os-resetState`), unless it already is ERROR with
 * no task: a task left over from before the failure, or a failed attempt, would make Nova refuse.
 * A failure is logged, not thrown (the evacuate is sent anyway).
 */
export async function resetToError(
  compute: ComputeApi,
  instanceId: string,
  server: Server,
  log: Logger,
): Promise<void> {
  if (server.status === 'ERROR' && !server['OS-EXT-STS:task_state']) return;
  try {
    await compute.resetServerState(instanceId, 'error');
    log.info(
      { taskState: server['OS-EXT-STS:task_state'] ?? null },
      `Reset ${instanceId} to error before evacuating`,
    );
  } catch (error) {
    log.warn({ err: error }, `could not reset ${instanceId} to error; evacuating anyway`);
  }
}
