import { type ComputeApi, NovaApiError } from '@lifeguard/openstack';
import type { Logger } from 'pino';
import type { InstanceEvacuationTarget } from './instance-evacuation-types.ts';

/** What Nova answered an evacuate request: accepted, or refused with its status and message. */
export type EvacuateAnswer =
  | { ok: true; requestId: string | null }
  | { ok: false; requestId: string | null; message: string };

/**
 * One evacuate request, with `host` when a reserved host is given; Nova's 409 or 500 for a request
 * with a host is retried once without it (the scheduler then picks). Logs `Evacuation accepted for
 * <id> (nova-req: <req-id>)` or the refusal.
 * @throws the Nova client's network errors (a refusal is an answer, not an error)
 */
export async function sendEvacuate(
  compute: ComputeApi,
  target: InstanceEvacuationTarget,
  host: string | null,
  log: Logger,
): Promise<EvacuateAnswer> {
  try {
    const info = await compute.evacuate(target.instanceId, host ? { host } : {});
    log.info(
      { novaRequestId: info.requestId, targetHost: host },
      `Evacuation accepted for ${target.instanceId} (nova-req: ${info.requestId ?? 'none'})`,
    );
    return { ok: true, requestId: info.requestId };
  } catch (error) {
    if (!(error instanceof NovaApiError)) throw error;
    log.warn(
      { novaRequestId: error.requestId, status: error.status, targetHost: host },
      `Evacuation refused for ${target.instanceId} (nova-req: ${error.requestId ?? 'none'}): ${error.apiMessage}`,
    );
    if (host !== null && (error.status === 409 || error.status === 500)) {
      return sendEvacuate(compute, target, null, log);
    }
    return { ok: false, requestId: error.requestId, message: `HTTP ${error.status}: ${error.apiMessage}` };
  }
}
