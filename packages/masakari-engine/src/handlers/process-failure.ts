import { formatDisabledReason, parseDisabledReason } from '@lifeguard/instance-ha';
import { type ComputeApi, type ComputeService, pickComputeService } from '@lifeguard/openstack';
import type { Logger } from '@lifeguard/runtime';
import { NOVA_COMPUTE_PROCESS } from '../rules/notification-action.ts';
import { isoFromMasakari, workflowDetail } from '../workflow-details.ts';
import { type HandlerContext, type HandlerResult, waitFor } from './handler.ts';

export interface ProcessFailureOptions {
  readonly compute: Pick<ComputeApi, 'listServices' | 'updateService'>;
  readonly logger: Logger;
  readonly serviceUpdateTimeoutMilliseconds: number;
  readonly watchMilliseconds: number;
}

/** The host's nova-compute service as Nova lists it now, or null. */
async function computeService(
  compute: Pick<ComputeApi, 'listServices'>,
  host: string,
  serviceId: string | null,
): Promise<ComputeService | null> {
  return pickComputeService(await compute.listServices({ binary: 'nova-compute', host }), host, serviceId);
}

const DISABLE_TASK = 'DisableComputeNodeTask';
const CONFIRM_TASK = 'ConfirmComputeNodeDisabledTask';
const ENABLE_TASK = 'EnableComputeNodeTask';

/**
 * PROCESS notifications about nova-compute (docs/migrating-from-masakari.md#process): STOPPED disables
 * the host's compute service with lifeguard's `process-stopped` marker (its time is the notification's
 * `created_at`, so a redelivered job writes the same reason) and waits until Nova shows it disabled;
 * a service already disabled is left as it is (Masakari skips the step too). STARTED enables the
 * service again only while lifeguard's marker is still its `disabled_reason`: a service an operator
 * disabled, or one forced down by an incident, is never enabled here.
 */
export class ProcessFailureHandler {
  constructor(private readonly options: ProcessFailureOptions) {}

  async disable(context: HandlerContext): Promise<HandlerResult> {
    const { compute, logger } = this.options;
    const host = context.host.name;
    const now = () => new Date();
    const service = await computeService(compute, host, null);
    if (service === null) {
      const reason = `Nova lists no nova-compute service on ${host}`;
      return { status: 'error', reason, details: [workflowDetail(DISABLE_TASK, 'FAILURE', reason, now())] };
    }
    const marker = parseDisabledReason(service.disabled_reason);
    const ours = marker.kind === 'process-stopped' && marker.origin === 'lifeguard';
    if (service.status === 'disabled' && !ours) {
      const reason = `compute service of ${host} already disabled (${service.disabled_reason ?? 'no reason'}): left as it is`;
      return {
        status: 'finished',
        reason,
        details: [workflowDetail(DISABLE_TASK, 'SKIPPED', reason, now())],
      };
    }
    const disabledReason = formatDisabledReason({
      kind: 'process-stopped',
      at: new Date(isoFromMasakari(context.notification.createdAt)),
    });
    if (service.status !== 'disabled') {
      try {
        await compute.updateService(service.id, { status: 'disabled', disabled_reason: disabledReason });
      } catch (error) {
        // Nova may have saved the status before asking nova-compute to update its traits: the listing decides.
        logger.warn(
          { err: error, host },
          `disabling the compute service of ${host}: Nova answered with an error`,
        );
      }
    }
    await context.progress(
      workflowDetail(
        DISABLE_TASK,
        'SUCCESS',
        `${NOVA_COMPUTE_PROCESS} stopped: compute service of ${host} disabled (${disabledReason})`,
        now(),
      ),
    );
    const disabled = await waitFor(
      async () => {
        const current = await computeService(compute, host, service.id);
        return current?.status === 'disabled' ? current : null;
      },
      {
        timeoutMilliseconds: this.options.serviceUpdateTimeoutMilliseconds,
        intervalMilliseconds: this.options.watchMilliseconds,
      },
    );
    if (disabled === null) {
      const reason = `Nova did not show the compute service of ${host} disabled within ${this.options.serviceUpdateTimeoutMilliseconds / 1000} s`;
      return { status: 'error', reason, details: [workflowDetail(CONFIRM_TASK, 'FAILURE', reason, now())] };
    }
    logger.warn(
      { host, disabledReason: disabled.disabled_reason },
      `${NOVA_COMPUTE_PROCESS} stopped on ${host}: compute service disabled (no new servers there), nothing fenced`,
    );
    const reason = `compute service of ${host} disabled: ${disabled.disabled_reason ?? ''}`;
    return { status: 'finished', reason, details: [workflowDetail(CONFIRM_TASK, 'SUCCESS', reason, now())] };
  }

  async enable(context: HandlerContext): Promise<HandlerResult> {
    const { compute, logger } = this.options;
    const host = context.host.name;
    const service = await computeService(compute, host, null);
    const marker = parseDisabledReason(service?.disabled_reason);
    const ours = marker.kind === 'process-stopped' && marker.origin === 'lifeguard';
    if (service === null || service.status !== 'disabled' || !ours || service.forced_down) {
      const state =
        service === null
          ? 'Nova lists no nova-compute service there'
          : service.status === 'enabled'
            ? 'it is enabled'
            : service.forced_down
              ? 'it is forced down'
              : `it was disabled by someone else (${service.disabled_reason ?? 'no reason'})`;
      const reason = `compute service of ${host} left as it is: ${state}`;
      return {
        status: 'finished',
        reason,
        details: [workflowDetail(ENABLE_TASK, 'SKIPPED', reason, new Date())],
      };
    }
    await compute.updateService(service.id, { status: 'enabled' });
    logger.info({ host }, `${NOVA_COMPUTE_PROCESS} runs again on ${host}: compute service enabled`);
    const reason = `${NOVA_COMPUTE_PROCESS} started: compute service of ${host} enabled`;
    return {
      status: 'finished',
      reason,
      details: [workflowDetail(ENABLE_TASK, 'SUCCESS', reason, new Date())],
    };
  }
}
