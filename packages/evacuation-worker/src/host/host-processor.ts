import {
  EvacuateHostJobData,
  type EvacuateHostJobResult,
  EvacuateInstanceJobData,
  evacuateInstanceJobId,
  JOB_NAMES,
} from '@lifeguard/contracts';
import { EvacuabilityCache, ExcludedProjects } from '@lifeguard/instance-ha';
import type { Server } from '@lifeguard/openstack';
import { parseJobData } from '@lifeguard/runtime';
import { DelayedError, UnrecoverableError, WaitingChildrenError } from 'bullmq';
import { announceSkipped } from '../instances/announce-skipped.ts';
import { MAX_TRANSIENT_FAILURES, transientRetryDelayMilliseconds } from '../transient-retry.ts';
import type { HostEvacuationDependencies } from './host-dependencies.ts';
import { HostOutcome } from './host-outcome.ts';
import { HostEvacuationState } from './host-state.ts';
import type { HostJob, HostStepContext } from './host-step-context.ts';
import { INSTANCE_JOB_OPTIONS } from './job-options.ts';
import { planHostEvacuation } from './plan.ts';
import { checkEvacuationSafety } from './safety-checks.ts';
import { verifyInstances } from './verify-instances.ts';

export { MAX_TRANSIENT_FAILURES } from '../transient-retry.ts';

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
  private readonly outcome: HostOutcome;

  private readonly evacuability: EvacuabilityCache;

  private readonly excludedProjects: ExcludedProjects | null;

  constructor(private readonly deps: HostEvacuationDependencies) {
    this.outcome = new HostOutcome(deps);
    this.evacuability = new EvacuabilityCache(deps.compute, deps.image, deps.config, deps.logger);
    this.excludedProjects = deps.identity
      ? new ExcludedProjects(deps.identity, deps.config.skipServersInProject, deps.logger)
      : null;
  }

  /** The BullMQ processor function. */
  readonly process = async (job: HostJob, token?: string): Promise<EvacuateHostJobResult> => {
    const data = parseJobData(EvacuateHostJobData, job, 'evacuate-host job data', this.deps.logger);
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
        const next = await this.step({ job, token: token ?? '', data, state, log });
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
        const delay = transientRetryDelayMilliseconds(failures);
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

  private async step(context: HostStepContext): Promise<HostEvacuationState> {
    const { job, token, data, state, log } = context;
    switch (state.step) {
      case 'check':
        return this.check(context);
      case 'plan':
        return this.plan(context);
      case 'delay':
        if (state.delayUntil !== null && Date.now() < Date.parse(state.delayUntil)) {
          log.info(`Waiting DELAY (${this.deps.config.delaySeconds} s) before evacuating ${data.host}`);
          await job.moveToDelayed(Date.parse(state.delayUntil), token);
          throw new DelayedError();
        }
        return { ...state, step: state.plan.length === 0 ? 'verify' : 'phase' };
      case 'phase':
        return this.phase(context);
      case 'verify':
        return this.verify(context);
      case 'power-on':
        return this.outcome.powerOn(context);
      case 'complete':
        return this.outcome.complete(context);
      case 'fail':
        return this.outcome.fail(context);
      case 'done':
        return state;
    }
  }

  private async check(context: HostStepContext): Promise<HostEvacuationState> {
    const { job, token, data, state, log } = context;
    const { deps } = this;
    // The plan's reads (the host's servers; the image and flavor listings, cached) start while the
    // safety checks run. They only read: nothing is evacuated unless the checks pass.
    if (deps.config.taggedImages || deps.config.taggedFlavors) void this.evacuability.get();
    const serversRead = deps.compute.listServers({ host: data.host, allTenants: true });
    serversRead.catch(() => undefined);
    const verdict = await checkEvacuationSafety(
      deps.compute,
      deps.incidents,
      deps.config,
      deps.settings.thresholdCheck,
      data,
      log,
      deps.heartbeats,
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
        { reason: verdict.reason, gate: verdict.gate },
        `Evacuation of ${data.host} deferred: ${verdict.reason}; looking again in ${deps.settings.recheckMilliseconds / 1000} s`,
      );
      await job.moveToDelayed(Date.now() + deps.settings.recheckMilliseconds, token);
      throw new DelayedError();
    }
    log.info(
      { proof: verdict.incident.fence?.proof, method: verdict.incident.fence?.method },
      `Safety checks passed for ${data.host}: fenced (${verdict.incident.fence?.proof}) and ${verdict.service.forced_down ? 'forced down' : 'down'}`,
    );
    // Planning follows at once (checking again after a crash in between costs nothing).
    return this.plan(
      { ...context, state: { ...state, step: 'plan', serviceId: verdict.service.id } },
      serversRead,
    );
  }

  /** @param serversRead the host's servers when already being read (else they are listed here) */
  private async plan(
    context: HostStepContext,
    serversRead?: Promise<Server[]>,
  ): Promise<HostEvacuationState> {
    const { job, data, state, log } = context;
    const { deps } = this;
    const resume = data.resume || job.attemptsMade > 0;
    // Evacuations since the host last reported belong to this failure (the host has not been up since).
    const evacuatedSince = data.resume
      ? ((await deps.incidents.get(data.incidentId))?.evidence.updatedAt ?? null)
      : null;
    const plan = await planHostEvacuation(
      deps.compute,
      { evacuability: this.evacuability, excludedProjects: this.excludedProjects },
      deps.config,
      deps.settings.policy,
      data.host,
      resume,
      log,
      serversRead,
      evacuatedSince,
    );
    const { selection } = plan;
    log.info(
      {
        instances: plan.instances.map((instance) => instance.id),
        phases: plan.phaseCount,
        skipped: selection.wrongStatus.length + selection.excluded.length + selection.notEvacuable.length,
      },
      plan.instances.length === 0
        ? `Nothing to evacuate on ${data.host}`
        : `Evacuating ${plan.instances.length} instances of ${data.host} in ${plan.phaseCount} phase(s), mode ${deps.settings.mode}`,
    );
    await announceSkipped(deps.events, log, data, selection);
    const placement = await deps.placement.choose(
      data,
      state.serviceId ?? data.serviceId,
      plan.instances.length,
      log,
    );
    const { reservedHost } = placement;
    const chosen = {
      reservedHost,
      reservedHostEnabled: placement.reservedHostEnabled,
      placement: { targetHost: placement.targetHost, targetHostUse: placement.targetHostUse },
    };
    if (placement.refusal !== null) {
      // A segment's reserved_host with no usable reserved host: nothing is evacuated, a person acts.
      const failures = Object.fromEntries(plan.instances.map(({ id }) => [id, placement.refusal!]));
      const failureReason = placement.refusal;
      return { ...state, ...chosen, step: 'fail', plan: plan.instances, failures, failureReason };
    }
    await deps.incidents.setState(data.incidentId, 'evacuating');
    await deps.events.publish('host.evacuation.started', {
      host: data.host,
      incidentId: data.incidentId,
      mode: deps.settings.mode,
      instanceCount: plan.instances.length,
      reservedHost: placement.announced,
    });
    const delayMilliseconds = plan.instances.length > 0 ? deps.config.delaySeconds * 1000 : 0;
    return {
      ...state,
      step: delayMilliseconds > 0 ? 'delay' : plan.instances.length > 0 ? 'phase' : 'verify',
      plan: plan.instances,
      phaseCount: plan.phaseCount,
      phaseIndex: 0,
      phaseAdded: false,
      ...chosen,
      delayUntil: delayMilliseconds > 0 ? new Date(Date.now() + delayMilliseconds).toISOString() : null,
    };
  }

  private async phase(context: HostStepContext): Promise<HostEvacuationState> {
    const { job, token, data, state, log } = context;
    const { deps } = this;
    if (state.phaseIndex >= state.phaseCount) return { ...state, step: 'verify' };
    if (!state.phaseAdded) {
      // A failed instance stopped the host (smart, orchestrated): no later phase is started.
      if (deps.settings.policy.failedInstanceStopsHost && state.phaseIndex > 0) {
        const stopped = await deps.stopFlags.reason(data.incidentId);
        if (stopped !== null) {
          log.warn(`Not starting phase ${state.phaseIndex + 1} of ${data.host}: ${stopped}`);
          return { ...state, step: 'verify' };
        }
      }
      const members = state.plan.filter((instance) => instance.phase === state.phaseIndex);
      const staggerMilliseconds = deps.config.evacuationStaggerSeconds * 1000;
      // Jobs planned before the placement was kept: FORCE_RESERVED_HOST_EVACUATION decides, as then.
      const { targetHost, targetHostUse } = state.placement ?? {
        targetHost: deps.config.forceReservedHostEvacuation ? state.reservedHost : null,
        targetHostUse: 'first-attempt' as const,
      };
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
            targetHostUse,
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
    if (deps.settings.policy.failedInstanceStopsHost && next < state.phaseCount) {
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

  private async verify(context: HostStepContext): Promise<HostEvacuationState> {
    const { job, token, data, state, log } = context;
    const { deps } = this;
    const verifyStartedAt = state.verifyStartedAt ?? new Date().toISOString();
    const outcome = await verifyInstances({
      job,
      data,
      state: { ...state, verifyStartedAt },
      instanceQueue: deps.instanceQueue,
      evacuator: deps.evacuator,
      policy: deps.settings.policy,
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
      verifying: outcome.verifying,
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
    const kdump = await this.outcome.kdumpFenced(data);
    return { ...next, step: kdump ? 'complete' : 'power-on' };
  }
}
