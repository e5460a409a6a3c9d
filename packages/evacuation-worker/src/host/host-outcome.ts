import {
  type EvacuateHostJobData,
  type EvacuateHostJobResult,
  JOB_NAMES,
  PowerOnJobData,
  powerOnJobId,
  transitionEventId,
} from '@lifeguard/contracts';
import { formatDisabledReason } from '@lifeguard/instance-ha';
import { markService } from '@lifeguard/openstack';
import { WaitingChildrenError } from 'bullmq';
import type { HostEvacuationDependencies } from './host-dependencies.ts';
import type { HostEvacuationState } from './host-state.ts';
import type { HostStepContext } from './host-step-context.ts';
import { POWER_ON_JOB_OPTIONS } from './job-options.ts';

/**
 * The end of a host's evacuation (docs/instance-ha-rules.md#host-job steps 4–5): the power-on request
 * through the fencing worker (a child job on the `fencing` queue; not for kdump-fenced hosts), then
 * the `complete` marker, the incident `evacuated` and `host.evacuated`. A power-on that fails (the
 * fencing worker's job failed for good) does not undo the evacuation: an alert log line and
 * `host.power-on.failed` say that a person must power the host on, and the evacuation completes with
 * `poweredOn: false`. On an evacuation failure: the reserved
 * host this evacuation enabled back to the pool when nothing landed on it (one only held released), the FAILED marker, the incident `failed` and
 * `host.evacuation.failed` with an alert. Each step is safe to repeat.
 */
export class HostOutcome {
  constructor(private readonly deps: HostEvacuationDependencies) {}

  /** True when the host was kdump-fenced (job data, incident flag or fence proof). */
  async kdumpFenced(data: EvacuateHostJobData): Promise<boolean> {
    if (data.kdumpFenced) return true;
    const incident = await this.deps.incidents.get(data.incidentId);
    return incident?.kdumpFenced === true || incident?.fence?.proof === 'kdump';
  }

  async powerOn(context: HostStepContext): Promise<HostEvacuationState> {
    const { job, token, data, state, log } = context;
    const { deps } = this;
    const jobId = powerOnJobId(data.host, data.incidentId);
    if (!state.powerOnAdded) {
      await deps.fencingQueue.add(
        JOB_NAMES.powerOn,
        PowerOnJobData.parse({ host: data.host, incidentId: data.incidentId }),
        {
          ...POWER_ON_JOB_OPTIONS,
          jobId,
          parent: { id: job.id!, queue: job.queueQualifiedName },
        },
      );
      log.info(`Requested power-on of ${data.host} from the fencing worker (job ${jobId})`);
      return { ...state, powerOnAdded: true };
    }
    if (await job.moveToWaitingChildren(token)) throw new WaitingChildrenError();
    const failures = await job.getIgnoredChildrenFailures();
    const failure = failures[`${deps.fencingQueue.qualifiedName}:${jobId}`];
    if (failure !== undefined) {
      // The instances are recovered: the incident ends evacuated; the host waits for a person.
      log.error(
        { alert: true, reason: failure, evacuatedInstances: state.verified },
        `ALERT: the ${state.verified.length} instance(s) of ${data.host} were evacuated, but powering ${data.host} on failed (${failure}): a person must power ${data.host} on; it is re-enabled once its nova-compute reports again`,
      );
      await deps.events.publish('host.power-on.failed', {
        host: data.host,
        incidentId: data.incidentId,
        evacuatedInstances: state.verified,
        reason: failure,
      });
      return { ...state, step: 'complete', poweredOn: false };
    }
    log.info(`${data.host} was powered on`);
    return { ...state, step: 'complete', poweredOn: true };
  }

  durationSeconds(state: HostEvacuationState): number {
    return Math.max(0, (Date.now() - Date.parse(state.startedAt)) / 1000);
  }

  async complete(context: HostStepContext): Promise<HostEvacuationState> {
    const { data, state, log } = context;
    const { deps } = this;
    const kdump = await this.kdumpFenced(data);
    const serviceId = state.serviceId ?? data.serviceId;
    await markService(
      deps.compute,
      serviceId,
      formatDisabledReason({ kind: 'complete', kdump, incidentId: data.incidentId }),
    );
    await deps.incidents.setState(data.incidentId, 'evacuated');
    if (state.reservedHost !== null) await deps.reserved.release(state.reservedHost, data.incidentId);
    const evacuated = state.verified;
    const durationSeconds = this.durationSeconds(state);
    await deps.events.publish(
      'host.evacuated',
      {
        host: data.host,
        incidentId: data.incidentId,
        mode: deps.settings.mode,
        evacuatedInstances: evacuated,
        durationSeconds,
        poweredOn: state.poweredOn,
      },
      { id: transitionEventId('host.evacuated', data.incidentId) },
    );
    const result: EvacuateHostJobResult = {
      host: data.host,
      incidentId: data.incidentId,
      outcome: state.plan.length === 0 ? 'nothing-to-evacuate' : 'evacuated',
      mode: deps.settings.mode,
      evacuatedInstances: evacuated,
      failedInstances: [],
      reservedHost: state.reservedHost,
    };
    const label = state.plan.length === 0 ? 'nothing_to_evacuate' : 'evacuated';
    deps.metrics.hosts.inc({ result: label });
    deps.metrics.hostDuration.observe({ result: label }, durationSeconds);
    log.info(
      { durationSeconds, evacuated: evacuated.length },
      `Evacuation of ${data.host} complete: ${evacuated.length} instance(s) on other hosts`,
    );
    return { ...state, step: 'done', result };
  }

  async fail(context: HostStepContext): Promise<HostEvacuationState> {
    const { data, state, log } = context;
    const { deps } = this;
    const reason = state.failureReason ?? 'the evacuation failed';
    if (state.reservedHost !== null) {
      await deps.placement.giveBack(state.reservedHost, state.reservedHostEnabled, data.incidentId);
    }
    await markService(
      deps.compute,
      state.serviceId ?? data.serviceId,
      formatDisabledReason({ kind: 'failed', incidentId: data.incidentId }),
    );
    await deps.incidents.setState(data.incidentId, 'failed');
    const failedInstances = Object.keys(state.failures);
    await deps.events.publish('host.evacuation.failed', {
      host: data.host,
      incidentId: data.incidentId,
      failedInstances,
      reason,
    });
    const durationSeconds = this.durationSeconds(state);
    deps.metrics.hosts.inc({ result: 'failed' });
    deps.metrics.hostDuration.observe({ result: 'failed' }, durationSeconds);
    log.error(
      { alert: true, failedInstances, failures: state.failures },
      `ALERT: evacuation of ${data.host} FAILED: ${reason}; the host stays disabled and forced down for a person`,
    );
    const result: EvacuateHostJobResult = {
      host: data.host,
      incidentId: data.incidentId,
      outcome: 'failed',
      mode: deps.settings.mode,
      evacuatedInstances: state.verified,
      failedInstances,
      reservedHost: state.reservedHost,
    };
    return { ...state, step: 'done', result };
  }
}
