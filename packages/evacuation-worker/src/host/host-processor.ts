import {
  EvacuateHostJobData,
  type EvacuateHostJobResult,
  EvacuateInstanceJobData,
  evacuateInstanceJobId,
  JOB_NAMES,
  PowerOnJobData,
  powerOnJobId,
} from '@lifeguard/contracts';
import { formatDisabledReason, type IncidentStore, type InstanceHaConfig } from '@lifeguard/instance-ha';
import type { ComputeApi, ImageApi } from '@lifeguard/openstack';
import {
  DelayedError,
  type Job,
  type JobsOptions,
  type Queue,
  UnrecoverableError,
  WaitingChildrenError,
} from 'bullmq';
import type { Logger } from 'pino';
import type { EventSink } from '../event-sink.ts';
import type { InstanceEvacuator } from '../instances/instance-evacuator.ts';
import type { EvacuationMetrics } from '../metrics.ts';
import type { EvacuationWorkerSettings } from '../settings.ts';
import { findComputeService, markService } from './compute-service.ts';
import { HostEvacuationState } from './host-state.ts';
import { planHostEvacuation } from './plan.ts';
import type { ReservedHostManager } from './reserved-host-manager.ts';
import { checkEvacuationSafety } from './safety-checks.ts';
import type { StopFlags } from './stop-flags.ts';
import { verifyInstances } from './verify-instances.ts';

/** Options of every `evacuate-instance` child: the failure policy keeps the parent from waiting forever. */
export const INSTANCE_JOB_OPTIONS: JobsOptions = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 5_000 },
  // A failed child is recorded on the parent (getIgnoredChildrenFailures) and the parent goes on
  // once every child ended: it never stays in waiting-children (research/ecosystem.md 2.4).
  ignoreDependencyOnFailure: true,
  removeOnComplete: { age: 7 * 24 * 3600, count: 100_000 },
  removeOnFail: { age: 30 * 24 * 3600 },
};

/** Options of the `power-on` child added to the fencing queue (the fencing worker holds the BMC credentials). */
export const POWER_ON_JOB_OPTIONS: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 10_000 },
  ignoreDependencyOnFailure: true,
  removeOnComplete: { age: 7 * 24 * 3600 },
  removeOnFail: { age: 30 * 24 * 3600 },
};

/** Unexpected errors (Nova or Redis unreachable) are retried this many times with back-off. */
export const MAX_TRANSIENT_FAILURES = 30;

export interface HostEvacuationDependencies {
  readonly compute: ComputeApi;
  readonly image: ImageApi | null;
  readonly config: InstanceHaConfig;
  readonly settings: EvacuationWorkerSettings;
  readonly incidents: IncidentStore;
  readonly reserved: ReservedHostManager;
  readonly stopFlags: StopFlags;
  readonly events: EventSink;
  readonly metrics: EvacuationMetrics;
  readonly logger: Logger;
  /** Where `evacuate-instance` children are added. */
  readonly instanceQueue: Queue;
  /** Where the `power-on` child is added. */
  readonly fencingQueue: Queue;
  readonly evacuator: InstanceEvacuator;
}

type HostJob = Job<Record<string, unknown>, EvacuateHostJobResult>;

const isControl = (error: unknown) =>
  error instanceof DelayedError ||
  error instanceof WaitingChildrenError ||
  error instanceof UnrecoverableError;

/**
 * Processes `evacuate-host` jobs (the parent of a host's evacuation flow) as a sequence of steps kept
 * in the job's data (BullMQ's "process step jobs" pattern): the fencing worker adds the single job, and
 * this processor adds the children itself, one phase at a time, then waits for them with
 * `moveToWaitingChildren`. Steps: check (safety) → plan (which instances, reserved host,
 * `host.evacuation.started`) → delay (DELAY) → phase … (children) → verify (every instance settled on
 * another host) → power-on (a child on the fencing queue; not for kdump-fenced hosts) → complete
 * (`… complete` marker, `host.evacuated`), or fail (FAILED marker, `host.evacuation.failed`, the host
 * left disabled and forced down). Waits never hold a worker slot (delayed / waiting-children).
 */
export class HostEvacuationProcessor {
  constructor(private readonly deps: HostEvacuationDependencies) {}

  private get tracked(): boolean {
    return this.deps.settings.mode !== 'traditional';
  }

  /** The BullMQ processor function. */
  readonly process = async (job: HostJob, token?: string): Promise<EvacuateHostJobResult> => {
    const parsed = EvacuateHostJobData.safeParse(job.data);
    if (!parsed.success) {
      const reason = `invalid evacuate-host job data: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`;
      this.deps.logger.error({ jobId: job.id }, reason);
      throw new UnrecoverableError(reason);
    }
    const data = parsed.data;
    const log = this.deps.logger.child({ host: data.host, incidentId: data.incidentId, jobId: job.id });
    let state = HostEvacuationState.parse(
      job.data.evacuation ?? { step: 'check', startedAt: new Date().toISOString() },
    );
    const save = async (next: HostEvacuationState) => {
      state = next;
      await job.updateData({ ...job.data, evacuation: next });
    };
    for (;;) {
      try {
        if (state.step === 'done') return state.result as EvacuateHostJobResult;
        const next = await this.step(job, token ?? '', data, state, log);
        await save({ ...next, transientFailures: 0 });
      } catch (error) {
        if (isControl(error)) throw error;
        const failures = state.transientFailures + 1;
        if (failures > MAX_TRANSIENT_FAILURES) {
          log.error(
            { err: error },
            `Evacuation of ${data.host} gave up after ${MAX_TRANSIENT_FAILURES} errors`,
          );
          if (state.step !== 'fail') {
            await save({
              ...state,
              step: 'fail',
              failureReason: `gave up after repeated errors: ${(error as Error).message}`,
              transientFailures: 0,
            });
            continue;
          }
          throw new UnrecoverableError(
            `evacuation of ${data.host} could not be completed: ${(error as Error).message}`,
          );
        }
        const delay = Math.min(60_000, 1000 * 2 ** (failures - 1));
        log.warn(
          { err: error, step: state.step, attempt: failures, retryInMilliseconds: delay },
          `Evacuation step ${state.step} of ${data.host} failed; retrying`,
        );
        await save({ ...state, transientFailures: failures });
        await job.moveToDelayed(Date.now() + delay, token);
        throw new DelayedError();
      }
    }
  };

  private async step(
    job: HostJob,
    token: string,
    data: EvacuateHostJobData,
    state: HostEvacuationState,
    log: Logger,
  ): Promise<HostEvacuationState> {
    switch (state.step) {
      case 'check':
        return this.check(job, token, data, state, log);
      case 'plan':
        return this.plan(data, state, log, job.attemptsMade > 0);
      case 'delay':
        if (state.delayUntil !== null && Date.now() < Date.parse(state.delayUntil)) {
          log.info(`Waiting DELAY (${this.deps.config.delaySeconds} s) before evacuating ${data.host}`);
          await job.moveToDelayed(Date.parse(state.delayUntil), token);
          throw new DelayedError();
        }
        return { ...state, step: state.plan.length === 0 ? 'verify' : 'phase' };
      case 'phase':
        return this.phase(job, token, data, state, log);
      case 'verify':
        return this.verify(job, token, data, state, log);
      case 'power-on':
        return this.powerOn(job, token, data, state, log);
      case 'complete':
        return this.complete(data, state, log);
      case 'fail':
        return this.fail(data, state, log);
      case 'done':
        return state;
    }
  }

  private async check(
    job: HostJob,
    token: string,
    data: EvacuateHostJobData,
    state: HostEvacuationState,
    log: Logger,
  ): Promise<HostEvacuationState> {
    const { deps } = this;
    const verdict = await checkEvacuationSafety(
      deps.compute,
      deps.incidents,
      deps.config,
      deps.settings.thresholdCheck,
      data,
      log,
    );
    if (verdict.kind === 'refuse') {
      log.error(
        { alert: true, reason: verdict.reason },
        `ALERT: refusing to evacuate ${data.host}: ${verdict.reason}`,
      );
      await deps.events.publish('host.evacuation.failed', {
        host: data.host,
        incidentId: data.incidentId,
        failedInstances: [],
        reason: `refused: ${verdict.reason}`,
      });
      deps.metrics.hosts.inc({ result: 'refused' });
      throw new UnrecoverableError(`evacuation of ${data.host} refused: ${verdict.reason}`);
    }
    if (verdict.kind === 'defer') {
      log.warn(
        { reason: verdict.reason, threshold: verdict.threshold },
        `Evacuation of ${data.host} deferred: ${verdict.reason}; looking again in ${deps.settings.recheckMilliseconds / 1000} s`,
      );
      await job.moveToDelayed(Date.now() + deps.settings.recheckMilliseconds, token);
      throw new DelayedError();
    }
    log.info(
      { proof: verdict.incident.fence?.proof, method: verdict.incident.fence?.method },
      `Safety checks passed for ${data.host}: fenced (${verdict.incident.fence?.proof}) and ${verdict.service.forced_down ? 'forced down' : 'down'}`,
    );
    return { ...state, step: 'plan', serviceId: verdict.service.id };
  }

  private async plan(
    data: EvacuateHostJobData,
    state: HostEvacuationState,
    log: Logger,
    retried: boolean,
  ): Promise<HostEvacuationState> {
    const { deps } = this;
    const resume = data.resume || retried;
    const plan = await planHostEvacuation(
      deps.compute,
      deps.image,
      deps.config,
      deps.settings.mode,
      data.host,
      resume,
      log,
    );
    const { selection } = plan;
    log.info(
      {
        instances: plan.instances.map((instance) => instance.id),
        phases: plan.phaseCount,
        wrongStatus: selection.wrongStatus.map((server) => `${server.id}:${server.status}`),
        skippedByName: selection.skippedByName.map((server) => server.id),
        notEvacuable: selection.notEvacuable.map((server) => server.id),
      },
      plan.instances.length === 0
        ? `Nothing to evacuate on ${data.host}`
        : `Evacuating ${plan.instances.length} instances of ${data.host} in ${plan.phaseCount} phase(s), mode ${deps.settings.mode}`,
    );
    let reservedHost: string | null = null;
    if (deps.config.reservedHosts && plan.instances.length > 0) {
      const service = await findComputeService(deps.compute, data.host, state.serviceId ?? data.serviceId);
      if (service !== null) reservedHost = await deps.reserved.acquire(service, data.incidentId);
    }
    await deps.incidents.setState(data.incidentId, 'evacuating');
    await deps.events.publish('host.evacuation.started', {
      host: data.host,
      incidentId: data.incidentId,
      mode: deps.settings.mode,
      instanceCount: plan.instances.length,
      reservedHost,
    });
    const delayMilliseconds = plan.instances.length > 0 ? deps.config.delaySeconds * 1000 : 0;
    return {
      ...state,
      step: 'delay',
      plan: plan.instances,
      phaseCount: plan.phaseCount,
      phaseIndex: 0,
      phaseAdded: false,
      reservedHost,
      reservedHostEnabled: reservedHost !== null,
      delayUntil: delayMilliseconds > 0 ? new Date(Date.now() + delayMilliseconds).toISOString() : null,
    };
  }

  private async phase(
    job: HostJob,
    token: string,
    data: EvacuateHostJobData,
    state: HostEvacuationState,
    log: Logger,
  ): Promise<HostEvacuationState> {
    const { deps } = this;
    if (state.phaseIndex >= state.phaseCount) return { ...state, step: 'verify' };
    if (!state.phaseAdded) {
      if (this.tracked && state.phaseIndex > 0) {
        const stopped = await deps.stopFlags.reason(data.incidentId);
        if (stopped !== null) {
          log.warn(`Not starting phase ${state.phaseIndex + 1} of ${data.host}: ${stopped}`);
          return { ...state, step: 'verify' };
        }
      }
      const members = state.plan.filter((instance) => instance.phase === state.phaseIndex);
      const staggerMilliseconds = deps.config.evacuationStaggerSeconds * 1000;
      const targetHost = deps.config.forceReservedHostEvacuation ? state.reservedHost : null;
      await deps.instanceQueue.addBulk(
        members.map((instance, index) => ({
          name: JOB_NAMES.evacuateInstance,
          data: EvacuateInstanceJobData.parse({
            host: data.host,
            incidentId: data.incidentId,
            instanceId: instance.id,
            instanceName: instance.name,
            originalStatus: instance.status,
            targetHost,
            resume: data.resume,
            phase: instance.phase,
          }),
          opts: {
            ...INSTANCE_JOB_OPTIONS,
            jobId: evacuateInstanceJobId(instance.id, data.incidentId),
            parent: { id: job.id!, queue: job.queueQualifiedName },
            // Children of all hosts interleave: the k-th instance of every host before the (k+1)-th of any.
            priority: Math.min(index + 1, 2_000_000),
            ...(staggerMilliseconds > 0 && index > 0 ? { delay: index * staggerMilliseconds } : {}),
          },
        })),
      );
      log.info(
        {
          phase: state.phaseIndex + 1,
          priority: members[0]?.priority,
          instances: members.map((instance) => instance.id),
        },
        `Phase ${state.phaseIndex + 1}/${state.phaseCount} of ${data.host}: ${members.length} instance(s) queued`,
      );
      return { ...state, phaseAdded: true };
    }
    if (await job.moveToWaitingChildren(token)) throw new WaitingChildrenError();
    const next = state.phaseIndex + 1;
    if (this.tracked && next < state.phaseCount) {
      const failures = await job.getIgnoredChildrenFailures();
      if (Object.keys(failures).length > 0) {
        await deps.stopFlags.stop(data.incidentId, `an instance of phase ${state.phaseIndex + 1} failed`);
        return { ...state, step: 'verify' };
      }
    }
    return next >= state.phaseCount
      ? { ...state, step: 'verify' }
      : { ...state, phaseIndex: next, phaseAdded: false };
  }

  private async verify(
    job: HostJob,
    token: string,
    data: EvacuateHostJobData,
    state: HostEvacuationState,
    log: Logger,
  ): Promise<HostEvacuationState> {
    const { deps } = this;
    const verifyStartedAt = state.verifyStartedAt ?? new Date().toISOString();
    const outcome = await verifyInstances({
      job,
      data,
      state: { ...state, verifyStartedAt },
      instanceQueue: deps.instanceQueue,
      evacuator: deps.evacuator,
      tracked: this.tracked,
      timeoutSeconds: deps.config.evacuationTimeoutSeconds,
      events: deps.events,
      metrics: deps.metrics,
      logger: log,
    });
    const next: HostEvacuationState = {
      ...state,
      verifyStartedAt,
      verified: outcome.verified,
      deleted: outcome.deleted,
      failures: outcome.failures,
    };
    if (outcome.pending > 0) {
      await job.updateData({ ...job.data, evacuation: next });
      await job.moveToDelayed(Date.now() + deps.settings.pollMilliseconds, token);
      throw new DelayedError();
    }
    const failed = Object.keys(outcome.failures);
    if (failed.length > 0) {
      const stopped = await deps.stopFlags.reason(data.incidentId);
      return {
        ...next,
        step: 'fail',
        failureReason: `${failed.length} of ${state.plan.length} instance(s) not evacuated${stopped ? ` (${stopped})` : ''}`,
      };
    }
    const kdump = await this.kdumpFenced(data);
    return { ...next, step: kdump ? 'complete' : 'power-on' };
  }

  private async kdumpFenced(data: EvacuateHostJobData): Promise<boolean> {
    if (data.kdumpFenced) return true;
    const incident = await this.deps.incidents.get(data.incidentId);
    return incident?.kdumpFenced === true || incident?.fence?.proof === 'kdump';
  }

  private async powerOn(
    job: HostJob,
    token: string,
    data: EvacuateHostJobData,
    state: HostEvacuationState,
    log: Logger,
  ): Promise<HostEvacuationState> {
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
      return {
        ...state,
        step: 'fail',
        failureReason: `the instances were evacuated but powering ${data.host} on failed: ${failure}`,
      };
    }
    log.info(`${data.host} was powered on`);
    return { ...state, step: 'complete', poweredOn: true };
  }

  private durationSeconds(state: HostEvacuationState): number {
    return Math.max(0, (Date.now() - Date.parse(state.startedAt)) / 1000);
  }

  private async complete(
    data: EvacuateHostJobData,
    state: HostEvacuationState,
    log: Logger,
  ): Promise<HostEvacuationState> {
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
    await deps.events.publish('host.evacuated', {
      host: data.host,
      incidentId: data.incidentId,
      mode: deps.settings.mode,
      evacuatedInstances: evacuated,
      durationSeconds,
      poweredOn: state.poweredOn,
    });
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

  private async fail(
    data: EvacuateHostJobData,
    state: HostEvacuationState,
    log: Logger,
  ): Promise<HostEvacuationState> {
    const { deps } = this;
    const reason = state.failureReason ?? 'the evacuation failed';
    if (state.reservedHost !== null && state.reservedHostEnabled) {
      await deps.reserved.returnToPool(state.reservedHost, data.incidentId);
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
