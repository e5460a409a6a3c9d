import {
  type EventSink,
  InstanceRestartJob,
  type InstanceRestartOutcome,
  instanceRestartJobId,
  transitionEventId,
} from '@lifeguard/contracts';
import type { IncidentStore } from '@lifeguard/instance-ha';
import { parseJobData } from '@lifeguard/runtime';
import type { Job } from 'bullmq';
import type { Logger } from 'pino';
import { InstanceRestartFailedError } from './errors.ts';
import { type InstanceRestartDecision, instanceRestartDecision } from './policy/instance-restart-decision.ts';
import { type ReadFacts, readFacts } from './read-facts.ts';
import type { RestartRecords } from './restart-records.ts';
import { type RestartStepDeps, restartThroughNova } from './restart-steps.ts';
import type { InstanceRestartWorkerSettings } from './settings.ts';

export interface InstanceRestartProcessorDeps extends RestartStepDeps {
  readonly incidents: IncidentStore;
  readonly records: RestartRecords;
  readonly events: EventSink;
  readonly logger: Logger;
  readonly settings: InstanceRestartWorkerSettings;
  /** The wall clock the rule judges with (the hour of restarts); injected in tests. */
  now(): Date;
}

type Subject = {
  instanceId: string;
  instanceName: string;
  host: string;
  failure: InstanceRestartJob['failure'];
  notificationUuid: string | null;
  jobId: string;
};

/**
 * Runs one `instance-restart` job: reads the world now, asks the instance restart rule, and when it
 * says restart, restarts the guest through Nova; logs, publishes `instance.restart.*` and counts the
 * outcome. Nova or Redis unreachable is thrown for BullMQ to retry with back-off, except on the last
 * attempt, which ends `failed`.
 */
export class InstanceRestartProcessor {
  constructor(private readonly deps: InstanceRestartProcessorDeps) {}

  readonly process = async (job: Job): Promise<InstanceRestartOutcome> => {
    const { logger } = this.deps;
    const data = parseJobData(InstanceRestartJob, job, 'instance-restart job data', logger);
    const jobId = job.id ?? instanceRestartJobId(data.instanceId, data.notificationUuid ?? data.observedAt);
    const log = logger.child({ jobId, instanceId: data.instanceId, host: data.host });
    try {
      const outcome = await this.run(data, jobId, log);
      this.deps.metrics.outcomes.inc({ outcome: outcome.outcome });
      return outcome;
    } catch (error) {
      const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if (!(error instanceof InstanceRestartFailedError) && !lastAttempt) {
        log.warn(
          { err: error, attempt: job.attemptsMade + 1 },
          'instance restart interrupted; it will be retried',
        );
        throw error;
      }
      const reason = error instanceof InstanceRestartFailedError ? error.reason : (error as Error).message;
      await this.failed(data, jobId, reason, log);
      this.deps.metrics.outcomes.inc({ outcome: 'failed' });
      return { outcome: 'failed', reason };
    }
  };

  private async run(data: InstanceRestartJob, jobId: string, log: Logger): Promise<InstanceRestartOutcome> {
    const { deps } = this;
    const waitUntil = deps.monotonic() + deps.settings.stopTimeoutMilliseconds;
    for (;;) {
      const read = await readFacts(deps, data, jobId, deps.now());
      const decision = instanceRestartDecision(read.facts, deps.settings.rule);
      if (decision.action !== 'wait') return this.act(data, jobId, read, decision, log);
      if (deps.monotonic() >= waitUntil)
        throw new InstanceRestartFailedError(data.instanceId, decision.reason);
      log.info({ reason: decision.reason }, 'instance restart waits for Nova');
      await deps.sleep(deps.pollMilliseconds);
    }
  }

  private async act(
    data: InstanceRestartJob,
    jobId: string,
    read: ReadFacts,
    decision: Exclude<InstanceRestartDecision, { action: 'wait' }>,
    log: Logger,
  ): Promise<InstanceRestartOutcome> {
    const { deps } = this;
    const subject = this.subject(data, jobId, read.server?.name ?? '');
    switch (decision.action) {
      case 'ignore':
        log.info(
          { reason: decision.reason, masakariStatus: decision.masakariStatus },
          'instance failure not acted on',
        );
        return { outcome: 'ignored', reason: decision.reason };
      case 'give-up': {
        const maxPerHour = deps.settings.rule.maxRestartsPerHour;
        log.error(
          { reason: decision.reason, restartsWithinHour: decision.restartsWithinHour },
          'instance restart given up',
        );
        await deps.events.publish(
          'instance.restart.given-up',
          {
            ...subject,
            reason: decision.reason,
            restartsWithinHour: decision.restartsWithinHour,
            maxPerHour,
          },
          { id: transitionEventId('instance.restart.given-up', jobId) },
        );
        deps.metrics.givenUp.inc();
        return { outcome: 'given-up', reason: decision.reason };
      }
      case 'confirm':
        return this.completed(data, subject, decision.reason, log);
      case 'restart': {
        if (read.facts.ownProgress === null) {
          await deps.records.recordRestart(data.instanceId, jobId, deps.now());
          await deps.records.setProgress(jobId, 'began');
        }
        log.info({ ...decision }, 'restarting the instance through Nova');
        await deps.events.publish(
          'instance.restart.started',
          { ...subject, status: read.server?.status ?? 'unknown' },
          { id: transitionEventId('instance.restart.started', jobId) },
        );
        await restartThroughNova(deps, data.instanceId, jobId, decision);
        return this.completed(
          data,
          subject,
          'restarted: stopped, started and confirmed ACTIVE through Nova',
          log,
        );
      }
    }
  }

  private subject(data: InstanceRestartJob, jobId: string, instanceName: string): Subject {
    return {
      instanceId: data.instanceId,
      instanceName,
      host: data.host,
      failure: data.failure,
      notificationUuid: data.notificationUuid,
      jobId,
    };
  }

  private async completed(
    data: InstanceRestartJob,
    subject: Subject,
    reason: string,
    log: Logger,
  ): Promise<InstanceRestartOutcome> {
    const durationSeconds = Math.max(0, (this.deps.now().getTime() - Date.parse(data.observedAt)) / 1000);
    log.info({ durationSeconds }, 'instance ACTIVE again');
    await this.deps.events.publish(
      'instance.restart.completed',
      { ...subject, durationSeconds },
      { id: transitionEventId('instance.restart.completed', subject.jobId) },
    );
    this.deps.metrics.duration.observe(durationSeconds);
    return { outcome: 'restarted', reason };
  }

  private async failed(data: InstanceRestartJob, jobId: string, reason: string, log: Logger): Promise<void> {
    log.error({ reason }, 'instance restart failed');
    const server = await this.deps.compute.getServer(data.instanceId).catch(() => null);
    await this.deps.events.publish(
      'instance.restart.failed',
      { ...this.subject(data, jobId, server?.name ?? ''), reason },
      { id: transitionEventId('instance.restart.failed', jobId) },
    );
  }
}
