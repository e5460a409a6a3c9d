import { randomUUID } from 'node:crypto';
import { EvacuateInstanceJobData, type EvacuateInstanceJobResult } from '@lifeguard/contracts';
import type { IncidentStore } from '@lifeguard/instance-ha';
import { assertJobLock, JobLockLostError, parseJobData } from '@lifeguard/runtime';
import { DelayedError, type Job, UnrecoverableError, WaitingError } from 'bullmq';
import type { Logger } from 'pino';
import { z } from 'zod';
import {
  EvacuationInterruptedError,
  EvacuationJobLostError,
  InstanceEvacuationFailedError,
} from '../errors.ts';
import type { EventSink } from '../event-sink.ts';
import type { StopFlags } from '../host/stop-flags.ts';
import type { EvacuationMetrics } from '../metrics.ts';
import type { EvacuationPolicy } from '../policy/evacuation-policy.ts';
import { MAX_TRANSIENT_FAILURES, transientRetryDelayMilliseconds } from '../transient-retry.ts';
import { announceDeleted } from './announce-deleted.ts';
import { announceEvacuated } from './announce-evacuated.ts';
import type { EvacuateClaims } from './evacuate-claims.ts';
import type { HostRecheck } from './host-recheck.ts';
import {
  type InstanceEvacuationProgress,
  type InstanceEvacuationResult,
  NO_PROGRESS,
} from './instance-evacuation-types.ts';
import type { InstanceEvacuator } from './instance-evacuator.ts';

/** Errors in a row kept beside the progress: an evacuate step that saves progress starts the count again. */
const TransientFailures = z.object({ transientFailures: z.number().int().nonnegative() });

const Progress = z.object({
  attempts: z.number().int().nonnegative(),
  errors: z.number().int().nonnegative(),
  awaitingResult: z.boolean(),
  startedAt: z.string().nullable(),
  novaRequestId: z.string().nullable(),
});

export interface InstanceJobDependencies {
  readonly evacuator: InstanceEvacuator;
  readonly incidents: IncidentStore;
  readonly stopFlags: StopFlags;
  readonly events: EventSink;
  readonly metrics: EvacuationMetrics;
  readonly logger: Logger;
  /** SMART_EVACUATION / ORCHESTRATED_RESTART: which job announces `instance.evacuated`, whether a failure stops the host. */
  readonly policy: EvacuationPolicy;
  /**
   * Puts the reserved host a segment's auto_priority holds into service before a request names it
   * (HostPlacement.prepare). @returns false when it cannot take servers
   */
  readonly prepareTarget?: (host: string, data: EvacuateInstanceJobData) => Promise<boolean>;
  /** The world re-read before each evacuate request (recheckHost bound to Nova and the incidents). */
  readonly recheckHost: (data: EvacuateInstanceJobData) => Promise<HostRecheck>;
  /** The instances' evacuate claims: every evacuate request is sent under one (evacuateClaimVerdict). */
  readonly claims: EvacuateClaims;
  /** The job lock's duration (LIFEGUARD_JOB_LOCK_SECONDS), in milliseconds: checked and extended before each request. */
  readonly jobLockMilliseconds: number;
}

/** One run of an instance job: its BullMQ lock token (the claim's holder), and whether it took the claim. */
interface JobRun {
  readonly job: InstanceJob;
  readonly lockToken: string | undefined;
  readonly claimToken: string;
  claimed: boolean;
}

type InstanceJob = Job<unknown, EvacuateInstanceJobResult>;

/**
 * Processes `evacuate-instance` child jobs (any number of processes share them). Before anything it
 * checks again that the incident carries a fence record (defense in depth). Progress (attempts,
 * errors, when watching started) is kept in the job's progress, so a retried or stalled job continues
 * the count instead of starting over. A failed instance raises the host's stop flag when the policy
 * says a failure stops the host (SMART_EVACUATION / ORCHESTRATED_RESTART,
 * docs/instance-ha-rules.md#evacuation-policy), so that no further instance of that host is started;
 * the job then fails without retry (the parent records the failure: ignoreDependencyOnFailure). At
 * shutdown a job that is watching an evacuation goes back to the queue and resumes in another process.
 */
export class InstanceEvacuationProcessor {
  private readonly fences = new Map<string, Date>();

  constructor(private readonly deps: InstanceJobDependencies) {}

  readonly process = async (
    job: InstanceJob,
    token?: string,
    signal?: AbortSignal,
  ): Promise<EvacuateInstanceJobResult> => {
    const { deps } = this;
    const data = parseJobData(EvacuateInstanceJobData, job, 'evacuate-instance job data', deps.logger);
    const log = deps.logger.child({
      host: data.host,
      incidentId: data.incidentId,
      instanceId: data.instanceId,
    });
    const started = Date.now();
    const fencedAt = await this.fencedAt(data.incidentId);
    if (fencedAt === null) {
      const reason = `incident ${data.incidentId} has no fence record: not evacuating`;
      log.error({ alert: true }, `ALERT: ${reason}`);
      await this.failed(data, reason, 0, null, started);
      throw new UnrecoverableError(reason);
    }
    const saved = Progress.safeParse(job.progress);
    const progress: InstanceEvacuationProgress = saved.success ? saved.data : NO_PROGRESS;
    const run: JobRun = { job, lockToken: token, claimToken: token ?? randomUUID(), claimed: false };
    try {
      const result = await this.evacuate(run, data, fencedAt, progress, signal, log);
      await this.releaseClaim(run, data, log);
      // Only the run that holds the job says what became of the instance.
      if (!(await this.holdsLock(job, token))) throw new JobLockLostError(job.id ?? 'unknown');
      await this.announce(data, result, (Date.now() - started) / 1000, log);
      return {
        instanceId: data.instanceId,
        outcome: result.outcome,
        targetHost: result.host,
        migrationStatus: result.migrationStatus,
        attempts: result.attempts,
        novaRequestId: result.novaRequestId,
      };
    } catch (error) {
      await this.releaseClaim(run, data, log);
      throw await this.ended(error, job, token, data, progress, started, log);
    }
  };

  /** Runs the evacuator on the job's instance, its progress kept in the job's progress. */
  private evacuate(
    run: JobRun,
    data: EvacuateInstanceJobData,
    fencedAt: Date,
    progress: InstanceEvacuationProgress,
    signal: AbortSignal | undefined,
    log: Logger,
  ): Promise<InstanceEvacuationResult> {
    const { deps } = this;
    const { job } = run;
    return deps.evacuator.evacuate(
      {
        instanceId: data.instanceId,
        instanceName: data.instanceName,
        failedHost: data.host,
        originalStatus: data.originalStatus,
        targetHost: data.targetHost,
        targetHostUse: data.targetHostUse,
        fencedAt,
      },
      {
        ...(signal ? { signal } : {}),
        ...(data.targetHostUse === 'after-scheduler' && deps.prepareTarget
          ? { prepareTarget: (host: string) => deps.prepareTarget!(host, data) }
          : {}),
        progress,
        saveProgress: (next) => job.updateProgress(next),
        shouldStop: () => deps.stopFlags.isStopped(data.incidentId),
        recheckHost: async () => {
          await this.assertStillStored(job);
          return deps.recheckHost(data);
        },
        claimEvacuate: () => this.claim(run, data, log),
        onAccepted: () => deps.metrics.evacuateRequests.inc({ result: 'accepted' }),
        onRefused: () => deps.metrics.evacuateRequests.inc({ result: 'refused' }),
      },
    );
  }

  /**
   * Just before an evacuate request: this run must still hold its job's lock (a run whose lock lapsed
   * while it was slow may share the job with the run BullMQ handed it to: JobLockLostError, nothing is
   * sent), then it takes the instance's evacuate claim.
   */
  private async claim(run: JobRun, data: EvacuateInstanceJobData, log: Logger) {
    await assertJobLock(run.job, run.lockToken, this.deps.jobLockMilliseconds);
    const answer = await this.deps.claims.take(data, run.claimToken);
    if (answer.kind !== 'held') run.claimed = true;
    if (answer.kind === 'taken' && answer.previous !== null) {
      log.info(
        { previousHolder: answer.previous.name, claimGeneration: answer.generation },
        `Evacuate claim of ${data.instanceId} taken over from ${answer.previous.name || 'another worker'} (its claim ran out): reading Nova again before evacuating`,
      );
    }
    return answer;
  }

  /** Releases the evacuate claim this run took, when it ends however it ends (a failure is only logged). */
  private async releaseClaim(run: JobRun, data: EvacuateInstanceJobData, log: Logger): Promise<void> {
    if (!run.claimed) return;
    run.claimed = false;
    await this.deps.claims
      .release(data, run.claimToken)
      .catch((error: unknown) => log.warn({ err: error }, 'could not release the evacuate claim'));
  }

  /**
   * What an evacuation that threw becomes, as the error for BullMQ to see: a job lost with Redis' memory
   * stops without effect; a shutdown hands the job back to the queue (WaitingError); a failed instance
   * is announced failed and not retried (UnrecoverableError); any other error (Nova or Redis not
   * answering, the re-check unable to read the world) is retried as the host job retries its steps:
   * after an exponential back-off (1 s doubling, at most 60 s) in BullMQ's delayed state, without
   * spending an attempt, and given up, announced failed, after MAX_TRANSIENT_FAILURES errors in a row.
   */
  private async ended(
    error: unknown,
    job: InstanceJob,
    token: string | undefined,
    data: EvacuateInstanceJobData,
    progress: InstanceEvacuationProgress,
    started: number,
    log: Logger,
  ): Promise<unknown> {
    if (error instanceof EvacuationJobLostError || (await this.lost(job))) {
      log.warn(
        { jobId: job.id },
        `evacuation job of ${data.instanceId} lost with Redis' memory: stopped without effect`,
      );
      return error;
    }
    if (error instanceof JobLockLostError || !(await this.holdsLock(job, token))) {
      log.warn(
        { jobId: job.id },
        `evacuation of ${data.instanceId} stopped without effect: this run's job lock lapsed and another run holds the job`,
      );
      return error;
    }
    if (error instanceof EvacuationInterruptedError) {
      log.info(`Evacuation of ${data.instanceId} handed back to the queue (shutdown)`);
      await job.moveToWait(token);
      return new WaitingError();
    }
    if (error instanceof InstanceEvacuationFailedError) {
      await this.failed(data, error.reason, error.attempts, error.novaRequestId, started);
      return new UnrecoverableError(error.reason);
    }
    const saved = TransientFailures.safeParse(job.progress);
    const failures = (saved.success ? saved.data.transientFailures : 0) + 1;
    if (failures > MAX_TRANSIENT_FAILURES) {
      const reason = `gave up after ${MAX_TRANSIENT_FAILURES} errors in a row: ${(error as Error).message}`;
      await this.failed(data, reason, progress.attempts, progress.novaRequestId, started);
      return new UnrecoverableError(reason);
    }
    const delay = transientRetryDelayMilliseconds(failures);
    log.warn(
      { err: error, transientFailures: failures, retryInMilliseconds: delay },
      `evacuation of ${data.instanceId} failed; retrying`,
    );
    const current = typeof job.progress === 'object' && job.progress !== null ? job.progress : {};
    await job.updateProgress({ ...current, transientFailures: failures });
    await job.moveToDelayed(Date.now() + delay, token);
    return new DelayedError();
  }

  /**
   * Says what became of an instance that did not fail: `instance.evacuated` when the policy has the
   * instance job announce it (smart, orchestrated; in traditional mode the host job verifies and
   * announces it), `instance.evacuation.skipped` for a server its owner deleted, and the metrics.
   */
  private async announce(
    data: EvacuateInstanceJobData,
    result: InstanceEvacuationResult,
    durationSeconds: number,
    log: Logger,
  ): Promise<void> {
    const { deps } = this;
    if (result.outcome === 'evacuated' || result.outcome === 'already-evacuated') {
      if (deps.policy.instanceEvacuatedAnnouncedBy !== 'instance-job') return;
      deps.metrics.instances.inc({ result: 'succeeded' });
      deps.metrics.instanceDuration.observe({ result: 'succeeded' }, durationSeconds);
      await announceEvacuated(
        deps.events,
        data,
        {
          targetHost: result.host,
          migrationStatus: result.migrationStatus,
          attempts: result.attempts,
          novaRequestId: result.novaRequestId,
        },
        durationSeconds,
      );
    } else if (result.outcome === 'deleted') {
      deps.metrics.instances.inc({ result: 'deleted' });
      await announceDeleted(deps.events, log, data, result);
    } else if (result.outcome === 'skipped') {
      deps.metrics.instances.inc({ result: 'skipped' });
    }
  }

  /**
   * False when this run's job lock lapsed (another run, or none, holds the job); true while it holds it
   * (extended) or when Redis cannot tell.
   */
  private holdsLock(job: InstanceJob, token: string | undefined): Promise<boolean> {
    return assertJobLock(job, token, this.deps.jobLockMilliseconds).then(
      () => true,
      (error: unknown) => !(error instanceof JobLockLostError),
    );
  }

  /** True when Redis no longer holds the job (BullMQ answers `unknown`); false when it cannot tell. */
  private async lost(job: InstanceJob): Promise<boolean> {
    return (await job.getState().catch(() => null)) === 'unknown';
  }

  /** @throws EvacuationJobLostError when Redis no longer holds the job */
  private async assertStillStored(job: InstanceJob): Promise<void> {
    if (await this.lost(job)) throw new EvacuationJobLostError(job.id ?? 'unknown');
  }

  /**
   * When the incident's host was fenced, or null without a fence record. A fence record is never
   * removed once written (the first proof wins), so a found one is remembered for the process.
   */
  private async fencedAt(incidentId: string): Promise<Date | null> {
    const known = this.fences.get(incidentId);
    if (known) return known;
    const incident = await this.deps.incidents.get(incidentId);
    if (incident?.fence == null) return null;
    const at = new Date(incident.fence.at);
    if (this.fences.size >= 10_000) this.fences.clear();
    this.fences.set(incidentId, at);
    return at;
  }

  private async failed(
    data: EvacuateInstanceJobData,
    reason: string,
    attempts: number,
    novaRequestId: string | null,
    started: number,
  ): Promise<void> {
    const { deps } = this;
    if (deps.policy.failedInstanceStopsHost)
      await deps.stopFlags.stop(data.incidentId, `instance ${data.instanceId} failed: ${reason}`);
    deps.metrics.instances.inc({ result: 'failed' });
    deps.metrics.instanceDuration.observe({ result: 'failed' }, (Date.now() - started) / 1000);
    deps.logger.error(
      { host: data.host, incidentId: data.incidentId, instanceId: data.instanceId, novaRequestId },
      `Instance ${data.instanceId} (${data.instanceName}) of ${data.host} was not evacuated: ${reason}`,
    );
    await deps.events.publish('instance.evacuation.failed', {
      host: data.host,
      incidentId: data.incidentId,
      instanceId: data.instanceId,
      instanceName: data.instanceName,
      reason,
      attempts,
      novaRequestId,
    });
  }
}
