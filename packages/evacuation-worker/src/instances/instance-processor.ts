import {
  EvacuateInstanceJobData,
  type EvacuateInstanceJobResult,
  type EvacuationMode,
  transitionEventId,
} from '@lifeguard/contracts';
import type { IncidentStore } from '@lifeguard/instance-ha';
import { parseJobData } from '@lifeguard/runtime';
import { type Job, UnrecoverableError, WaitingError } from 'bullmq';
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
import { announceDeleted } from './announce-deleted.ts';
import type { HostRecheck } from './host-recheck.ts';
import {
  type InstanceEvacuationProgress,
  type InstanceEvacuationResult,
  NO_PROGRESS,
} from './instance-evacuation-types.ts';
import type { InstanceEvacuator } from './instance-evacuator.ts';

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
  readonly mode: EvacuationMode;
  /** The world re-read before each evacuate request (recheckHost bound to Nova and the incidents). */
  readonly recheckHost: (data: EvacuateInstanceJobData) => Promise<HostRecheck>;
}

type InstanceJob = Job<unknown, EvacuateInstanceJobResult>;

/**
 * Processes `evacuate-instance` child jobs (any number of processes share them). Before anything it
 * checks again that the incident carries a fence record (defense in depth). Progress (attempts,
 * errors, when watching started) is kept in the job's progress, so a retried or stalled job continues
 * the count instead of starting over. A failed instance in SMART_EVACUATION / ORCHESTRATED_RESTART
 * mode raises the host's stop flag so that no further instance of that host is started; the job then
 * fails without retry (the parent records the failure: ignoreDependencyOnFailure). At shutdown a job
 * that is watching an evacuation goes back to the queue and resumes in another process.
 */
export class InstanceEvacuationProcessor {
  private readonly fences = new Map<string, Date>();

  constructor(private readonly deps: InstanceJobDependencies) {}

  private get tracked(): boolean {
    return this.deps.mode !== 'traditional';
  }

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
    try {
      const result = await deps.evacuator.evacuate(
        {
          instanceId: data.instanceId,
          instanceName: data.instanceName,
          failedHost: data.host,
          originalStatus: data.originalStatus,
          targetHost: data.targetHost,
          fencedAt,
        },
        {
          ...(signal ? { signal } : {}),
          progress,
          saveProgress: (next) => job.updateProgress(next),
          shouldStop: () => deps.stopFlags.isStopped(data.incidentId),
          recheckHost: async () => {
            await this.assertStillStored(job);
            return deps.recheckHost(data);
          },
          onAccepted: () => deps.metrics.evacuateRequests.inc({ result: 'accepted' }),
          onRefused: () => deps.metrics.evacuateRequests.inc({ result: 'refused' }),
        },
      );
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
      if (error instanceof EvacuationJobLostError || (await this.lost(job))) {
        log.warn(
          { jobId: job.id },
          `evacuation job of ${data.instanceId} lost with Redis' memory: stopped without effect`,
        );
        throw error;
      }
      if (error instanceof EvacuationInterruptedError) {
        log.info(`Evacuation of ${data.instanceId} handed back to the queue (shutdown)`);
        await job.moveToWait(token);
        throw new WaitingError();
      }
      if (error instanceof InstanceEvacuationFailedError) {
        await this.failed(data, error.reason, error.attempts, error.novaRequestId, started);
        throw new UnrecoverableError(error.reason);
      }
      const attempts = job.opts.attempts ?? 1;
      if (job.attemptsMade + 1 >= attempts) {
        const reason = `gave up after ${attempts} attempts: ${(error as Error).message}`;
        await this.failed(data, reason, progress.attempts, progress.novaRequestId, started);
        throw new UnrecoverableError(reason);
      }
      log.warn(
        { err: error, attempt: job.attemptsMade + 1 },
        `evacuation of ${data.instanceId} failed; it will be retried`,
      );
      throw error;
    }
  };

  /**
   * Says what became of an instance that did not fail: `instance.evacuated` (tracked modes: in
   * traditional mode the host job verifies and announces it), `instance.evacuation.skipped` for a
   * server its owner deleted, and the metrics.
   */
  private async announce(
    data: EvacuateInstanceJobData,
    result: InstanceEvacuationResult,
    durationSeconds: number,
    log: Logger,
  ): Promise<void> {
    const { deps } = this;
    if (result.outcome === 'evacuated' || result.outcome === 'already-evacuated') {
      if (!this.tracked) return;
      deps.metrics.instances.inc({ result: 'succeeded' });
      deps.metrics.instanceDuration.observe({ result: 'succeeded' }, durationSeconds);
      // One id per instance and incident: a child retried after its worker died past this point
      // finds the instance already evacuated and announces it again as the same event.
      await deps.events.publish(
        'instance.evacuated',
        {
          host: data.host,
          incidentId: data.incidentId,
          instanceId: data.instanceId,
          instanceName: data.instanceName,
          targetHost: result.host,
          migrationStatus: result.migrationStatus,
          attempts: result.attempts,
          novaRequestId: result.novaRequestId,
          durationSeconds,
        },
        { id: transitionEventId('instance.evacuated', data.incidentId, data.instanceId) },
      );
    } else if (result.outcome === 'deleted') {
      deps.metrics.instances.inc({ result: 'deleted' });
      await announceDeleted(deps.events, log, data, result);
    } else if (result.outcome === 'skipped') {
      deps.metrics.instances.inc({ result: 'skipped' });
    }
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
    if (this.tracked)
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
