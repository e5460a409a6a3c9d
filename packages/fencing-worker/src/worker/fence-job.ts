import {
  EvacuateHostJobData,
  evacuateHostJobId,
  type FencingJobData,
  FencingJobData as FencingJobDataSchema,
  type FencingJobResult,
  JOB_NAMES,
  parseWith,
  transitionEventId,
} from '@lifeguard/contracts';
import { type FenceRecord, type Incident, KdumpWait } from '@lifeguard/instance-ha';
import { blankMemoryReason, JobLockLostError, type Logger, redisKey } from '@lifeguard/runtime';
import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import { BlankMemoryError, FenceDeferredError } from '../errors.ts';
import { redactSecrets } from '../process/redact-secrets.ts';
import type { FenceJobDependencies } from './fence-job-dependencies.ts';
import { GuardedPowerOff } from './guarded-power-off.ts';
import { beginJobAttempt } from './job-attempt.ts';
import { classifyJobError } from './job-errors.ts';
import { waitForKdump } from './kdump-wait.ts';
import { markServiceFenced } from './nova-marking.ts';

export type { FenceJobDependencies } from './fence-job-dependencies.ts';

/**
 * One `fence` job: the per-host job of docs/instance-ha-rules.md#host-job steps 1–2, then the hand-off to evacuation.
 *
 * 1. The incident's fence record is the only proof that counts. If the incident has none yet, the
 *    world is re-checked first (FenceRecheck: the host still down by its own reports, no heartbeat,
 *    DISABLED, THRESHOLD, `instanceha:max_failures`): a host that came back closes its incident as
 *    `recovered` and is left alone; a gate that can change defers the job (it waits POLL seconds and
 *    checks again, without spending an attempt). Then, with CHECK_KDUMP, a host the monitor saw in its crash kernel, or one that sends a fence_kdump
 *    packet within KDUMP_TIMEOUT, is kdump-fenced (no power fencing, docs/instance-ha-rules.md#kdump); otherwise the
 *    host is re-checked once more after the kdump wait, powered off through its fencing topology and
 *    the off state CONFIRMED, then the fence
 *    is recorded (first proof wins; an operator's `confirm-fenced` counts too). `forced_down` or a
 *    `disabled_reason` marker in Nova is never taken as proof.
 * 2. `host.fenced` is published once per incident.
 * 3. Nova: `forced_down=true`, then disabled with lifeguard's timestamped marker (docs/instance-ha-rules.md#nova-marking).
 * 4. An `evacuate-host` job with the deterministic `evacuateHostJobId` is added to the `evacuation`
 *    queue — only after the fence record was read back from the store.
 *
 * Before step 1 and again just before the power-off, a fence is refused on a blank memory
 * (BlankMemoryError): Redis lost the deployment generation marker this worker saw, its rebuild from
 * Nova is pending, or the incident is not in Redis. The refusal is logged at error and counted,
 * nothing is powered off or written to Nova; while the memory is lost or being rebuilt the job waits
 * POLL seconds without spending an attempt and checks again, and a job whose incident is not in
 * Redis ends: the node monitor admits the host again through its gates
 * (docs/failure-modes.md#redis-restarted-empty).
 *
 * Every step is safe to repeat: a job retried, or taken over from a worker killed at any point,
 * finds the fence record (no second power-off), or fences again an already-off host (confirmed off
 * again), re-reads Nova before writing, and adds the evacuation job under the same id. A closed
 * incident makes the job a no-op. When the job gives up (an unrecoverable error, or the last
 * attempt), `host.fencing.failed` is published, the incident is marked `failed`, an alert-level line
 * is logged, and — unless the host was fenced — nothing was written to Nova.
 */
export class FenceJob {
  constructor(private readonly deps: FenceJobDependencies) {}

  private publishedKey(incidentId: string): string {
    return redisKey(this.deps.keyPrefix, 'fencing-worker', 'incident', incidentId, 'host-fenced-published');
  }

  private scrub(text: string): string {
    return redactSecrets(text, this.deps.secrets);
  }

  /** Runs one attempt; see the class description. */
  async run(job: Job, token?: string): Promise<FencingJobResult | null> {
    const { data, attempt, logger } = beginJobAttempt(
      job,
      FencingJobDataSchema,
      'fence job data',
      this.deps.logger,
    );
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    let fencedHere: { attempts: number } | null = null;
    const guard = new GuardedPowerOff(this.deps, job, token, data.incidentId);
    try {
      await this.assertMemory();
      const current = await this.deps.incidents.get(data.incidentId);
      if (current === null)
        throw new BlankMemoryError('no-incident', `incident ${data.incidentId} is not in Redis`);
      if (current.state === 'closed') {
        logger.info({ outcome: current.outcome }, 'incident is closed; fence job has nothing to do');
        this.deps.metrics.fencing.inc({ result: 'skipped' });
        return null;
      }
      if (current.fence === null) {
        const established = await this.fenceAfterRecheck(data, current, guard, logger);
        if (established === null) {
          await new KdumpWait(this.deps.kdump, this.deps.kdumpTimeoutSeconds).settle(data.host);
          this.deps.metrics.fencing.inc({ result: 'recovered' });
          return null;
        }
        await this.deps.incidents.recordFence(data.incidentId, established.record);
        // The kdump question is settled with the fence: the next failure of the host waits afresh.
        await new KdumpWait(this.deps.kdump, this.deps.kdumpTimeoutSeconds).settle(data.host);
        // host.fenced counts the fence job's attempts, the failed ones before this one included, as
        // host.fencing.failed does; a fence without a power action (kdump) counts none.
        fencedHere = { attempts: established.byPower ? attempt : 0 };
      } else {
        logger.info(
          { proof: current.fence.proof, method: current.fence.method },
          'fence already recorded for this incident',
        );
      }
      // The hand-off rests on the stored record alone, read back after writing it.
      const incident = await this.deps.incidents.get(data.incidentId);
      if (incident?.fence == null)
        throw new Error(`incident ${data.incidentId} has no fence record after fencing`);
      const fence = incident.fence;
      await this.publishFencedOnce(incident, fence, fencedHere?.attempts ?? 0, seconds());
      const marking = await markServiceFenced(this.deps.compute, logger, {
        host: data.host,
        serviceId: data.serviceId,
        incidentId: data.incidentId,
        kdumpFenced: fence.proof === 'kdump',
      });
      logger.info({ ...marking }, 'compute service forced down and disabled');
      const evacuationJobId = await this.handToEvacuation(data, fence, logger);
      this.deps.metrics.fencing.inc({ result: 'succeeded' });
      this.deps.metrics.fencingDuration.observe({ result: 'succeeded' }, seconds());
      return {
        host: data.host,
        incidentId: data.incidentId,
        proof: fence.proof,
        method: fence.method,
        evacuationJobId,
      };
    } catch (error) {
      // Awaited here: the release below runs first, and the failure must not wait unhandled meanwhile.
      return await this.attemptFailed(error, { job, token, data, attempt, logger, seconds });
    } finally {
      await guard.release(logger);
    }
  }

  /**
   * A failed attempt: deferred (FenceDeferredError), refused (BlankMemoryError), or counted and then
   * retried or, when not recoverable or the last attempt, given up (see the class description).
   * @throws DelayedError when deferred or refused, UnrecoverableError or the error itself otherwise
   */
  private async attemptFailed(
    error: unknown,
    failed: {
      job: Job;
      token: string | undefined;
      data: FencingJobData;
      attempt: number;
      logger: Logger;
      seconds: () => number;
    },
  ): Promise<null> {
    const { job, token, data, attempt, logger, seconds } = failed;
    if (error instanceof FenceDeferredError) return this.defer(job, token, error, logger);
    if (error instanceof JobLockLostError) {
      logger.warn({ jobId: job.id }, `${error.message}: no power-off from this run`);
      throw error;
    }
    if (error instanceof BlankMemoryError) return this.refuse(job, token, error, logger);
    const { kind, recoverable } = classifyJobError(error);
    const reason = this.scrub(error instanceof Error ? error.message : String(error));
    const final = !recoverable || attempt >= (job.opts.attempts ?? 1);
    this.deps.metrics.fenceAttemptFailures.inc({ kind });
    this.deps.metrics.fencingDuration.observe({ result: final ? 'failed' : 'retried' }, seconds());
    if (final) {
      await this.giveUp(data, reason, recoverable, attempt, logger);
    } else {
      this.deps.metrics.fencing.inc({ result: 'retried' });
      logger.warn(
        { kind, reason, attemptsAllowed: job.opts.attempts ?? 1 },
        'fence attempt failed; it will be retried',
      );
    }
    if (!recoverable) throw new UnrecoverableError(`not recoverable (${kind}): ${reason}`);
    throw error;
  }

  /**
   * Throws BlankMemoryError when Redis' memory is lost or being rebuilt (blankMemoryReason of the
   * marker read now against the generation this worker saw); otherwise remembers the marker.
   */
  private async assertMemory(): Promise<void> {
    const generation = this.deps.generation;
    if (!generation) return;
    const marker = await generation.read();
    const reason = blankMemoryReason(marker, generation.remembered);
    if (reason !== null) throw new BlankMemoryError('redis-memory-lost', reason);
    if (marker) generation.remember(marker);
  }

  /**
   * No fence: logged at error and counted. While the memory is lost or being rebuilt the job waits
   * `deferSeconds` (DelayedError, no attempt spent) and then passes every check again; a job whose
   * incident is not in Redis ends (null): the node monitor admits the host again through its gates.
   */
  private async refuse(
    job: Job,
    token: string | undefined,
    refusal: BlankMemoryError,
    logger: Logger,
  ): Promise<null> {
    this.deps.metrics.fenceRefused.inc({ reason: refusal.reason });
    logger.error(
      { reason: refusal.reason, detail: refusal.detail },
      `fence refused on a blank memory (${refusal.detail}): nothing powered off or marked in Nova`,
    );
    if (refusal.reason === 'no-incident') return null;
    await job.moveToDelayed(Date.now() + this.deps.deferSeconds * 1000, token);
    throw new DelayedError(refusal.message);
  }

  /** Adds the `evacuate-host` job under its deterministic id; returns the id. */
  private async handToEvacuation(data: FencingJobData, fence: FenceRecord, logger: Logger): Promise<string> {
    const evacuationJobId = evacuateHostJobId(data.host, data.incidentId);
    const handOff: EvacuateHostJobData = parseWith(
      EvacuateHostJobData,
      {
        host: data.host,
        serviceId: data.serviceId,
        incidentId: data.incidentId,
        kdumpFenced: fence.proof === 'kdump',
        resume: data.resume,
        fencedAt: fence.at,
      },
      'evacuate-host job data',
    );
    await this.deps.evacuationQueue.add(JOB_NAMES.evacuateHost, handOff, { jobId: evacuationJobId });
    logger.info({ evacuationJobId, proof: fence.proof, method: fence.method }, 'host handed to evacuation');
    return evacuationJobId;
  }

  /**
   * Re-checks the world, then fences; null when the host came back (its incident is closed).
   * @throws FenceDeferredError when a gate that can change holds the fence back
   */
  private async fenceAfterRecheck(
    data: FencingJobData,
    incident: Incident,
    guard: GuardedPowerOff,
    logger: Logger,
  ): Promise<{ record: FenceRecord; byPower: boolean } | null> {
    if ((await this.deps.recheck.check(data, 'before fencing', logger)) === 'recovered') return null;
    await this.deps.incidents.setState(data.incidentId, 'fencing');
    return this.establishFence(data, incident, guard, logger);
  }

  /**
   * Holds the job back for `deferSeconds` without spending an attempt (BullMQ's delayed state), so
   * that it re-checks the gates then.
   * @throws DelayedError (bullmq), which tells the worker the job was moved, not failed
   */
  private async defer(
    job: Job,
    token: string | undefined,
    deferred: FenceDeferredError,
    logger: Logger,
  ): Promise<never> {
    this.deps.metrics.fencing.inc({ result: 'deferred' });
    this.deps.metrics.fenceDeferred.inc({ gate: deferred.gate });
    const deferSeconds = deferred.retryInSeconds ?? this.deps.deferSeconds;
    logger.warn(
      { gate: deferred.gate, reason: deferred.reason, deferSeconds },
      `fence deferred by ${deferred.gate}; checking again in ${deferSeconds} s`,
    );
    await job.moveToDelayed(Date.now() + deferSeconds * 1000, token);
    throw new DelayedError(deferred.message);
  }

  /**
   * Decides how the host is fenced and does it; returns the record to store and whether a power action
   * fenced it (not kdump), or null when it came back.
   */
  private async establishFence(
    data: FencingJobData,
    incident: Incident,
    guard: GuardedPowerOff,
    logger: Logger,
  ): Promise<{ record: FenceRecord; byPower: boolean } | null> {
    const now = () => new Date().toISOString();
    if (this.deps.checkKdump) {
      const seen =
        data.kdumpFenced ||
        incident.kdumpFenced ||
        (
          await waitForKdump(
            this.deps.kdump,
            data.host,
            this.deps.kdumpTimeoutSeconds,
            logger,
            this.deps.kdumpPollMilliseconds,
            incident.evidence.updatedAt === null ? null : new Date(incident.evidence.updatedAt),
          )
        ).decision === 'kdump-fenced';
      if (seen) {
        logger.info('host is in its crash kernel (fence_kdump): kdump-fenced, no power fencing');
        return {
          record: {
            proof: 'kdump',
            method: 'kdump',
            at: now(),
            by: null,
            note: 'fence_kdump packets received',
            reportingOverride: null,
          },
          byPower: false,
        };
      }
      logger.info(
        { kdumpTimeoutSeconds: this.deps.kdumpTimeoutSeconds },
        'no fence_kdump packet; fencing by power',
      );
      // The wait may have lasted KDUMP_TIMEOUT: the host may have come back meanwhile.
      if ((await this.deps.recheck.check(data, 'after the kdump wait', logger)) === 'recovered') return null;
    }
    // The gates and the kdump wait took time: Redis may have lost its memory meanwhile.
    await this.assertMemory();
    // Under the incident's power-off claim, which reads the incident again (GuardedPowerOff).
    const outcome = await guard.powerOff(data.host, logger);
    if (outcome.kind === 'recorded') return { record: outcome.record, byPower: false };
    const { result } = outcome;
    const notes = [
      ...(result.alreadyOff ? ['the BMC reported the host already off'] : []),
      ...result.failedMethods.map((failure) => `${failure.method} failed first: ${failure.reason}`),
    ];
    return {
      record: {
        proof: result.verified ? 'power-off-confirmed' : 'noop',
        method: result.method,
        at: now(),
        by: null,
        note: notes.length > 0 ? this.scrub(notes.join('; ')).slice(0, 1000) : null,
        reportingOverride: null,
      },
      byPower: true,
    };
  }

  /** Publishes `host.fenced` unless it was already published for this incident. */
  private async publishFencedOnce(incident: Incident, fence: FenceRecord, attempts: number, seconds: number) {
    const key = this.publishedKey(incident.id);
    if ((await this.deps.redis.exists(key)) === 1) return;
    // One id per incident: a worker killed between the publish and the key below publishes it again
    // after its restart, as the same event.
    await this.deps.events.publish(
      'host.fenced',
      {
        host: incident.host,
        incidentId: incident.id,
        proof: fence.proof,
        method: fence.method,
        attempts,
        durationSeconds: Math.max(0, seconds),
        reportingOverride: fence.reportingOverride,
      },
      { id: transitionEventId('host.fenced', incident.id) },
    );
    await this.deps.redis.set(key, fence.at, 'EX', 30 * 24 * 3600);
  }

  /** The job ends without success: event, incident state, alert-level log line. */
  private async giveUp(
    data: FencingJobData,
    reason: string,
    recoverable: boolean,
    attempts: number,
    logger: Logger,
  ): Promise<void> {
    this.deps.metrics.fencing.inc({ result: 'failed' });
    let fenced = false;
    try {
      const incident = await this.deps.incidents.get(data.incidentId);
      fenced = incident?.fence != null;
      if (incident !== null && incident.state !== 'closed')
        await this.deps.incidents.setState(data.incidentId, 'failed');
    } catch (error) {
      logger.warn({ err: error }, 'could not mark the incident failed');
    }
    logger.error(
      { alert: true, reason, recoverable, attempts, fenced },
      fenced
        ? 'ALERT: the host is fenced but could not be marked in Nova or handed to evacuation; a person must act'
        : 'ALERT: fencing failed; the host is left alone (not marked in Nova, not evacuated) until a person acts',
    );
    await this.deps.events.publish('host.fencing.failed', {
      host: data.host,
      incidentId: data.incidentId,
      reason: reason.slice(0, 2000),
      recoverable,
      attempts,
    });
  }
}
