import type { ComputeApi, Migration, Server } from '@lifeguard/openstack';
import type { Logger } from 'pino';
import { InstanceEvacuationFailedError } from '../errors.ts';
import { decideInstance, novaTime, serverHost } from './decide.ts';
import {
  EVACUATION_LOCK_REASON,
  type InstanceEvacuationContext,
  type InstanceEvacuationProgress,
  type InstanceEvacuationResult,
  type InstanceEvacuationSettings,
  type InstanceEvacuationTarget,
} from './instance-evacuation-types.ts';
import { InstanceReads, isNotFound, type Look, notLanded } from './instance-reads.ts';
import { sleep, throwIfInterrupted } from './interruptible-sleep.ts';
import { resetToError, sendEvacuate } from './send-evacuate.ts';
import { RESTORE_GRACE_SECONDS, settleAction } from './settle.ts';

/** One instance's evacuation in this job: what it acts on, its progress so far, and its read errors. */
interface EvacuationRun {
  readonly target: InstanceEvacuationTarget;
  readonly context: InstanceEvacuationContext;
  readonly log: Logger;
  progress: InstanceEvacuationProgress;
  /** Consecutive failed reads. */
  apiErrors: number;
}

/**
 * Evacuates one instance of a fenced host (docs/instance-ha-rules.md#smart_evacuation, docs/nova-facts.md#evacuation-in-nova to #servers), reading before
 * writing so that a retried, stalled or resumed job never evacuates twice: the server and this
 * incident's newest evacuation migration decide whether to evacuate, watch, or only restore
 * (see decideInstance).
 *
 * Before every evacuate request (the first, a retry, after a takeover or a restart) the world is
 * looked at again (`context.recheckHost`, the gates of the host's first decision): a host that may no
 * longer be evacuated fails the instance; a gate that says "not now" waits a poll.
 *
 * Every mode: lock with reason `lifeguard-evacuation` (failure ignored; a fresh instance's first read
 * runs meanwhile), reset a non-null task state to
 * `error` before evacuating, evacuate (with the reserved host as `host` when given; on 409/500 retried
 * once without it), log `Evacuation accepted for <id> (nova-req: <req-id>)`.
 * - traditional: done when Nova accepts (outcome `accepted`); the lock is kept and the host job
 *   verifies, restores and unlocks. A refusal fails the instance at once.
 * - every mode: a server Nova answers 404 for (its owner deleted it, before or during its
 *   evacuation) ends the instance as `deleted`, never as a failure.
 * - smart / orchestrated: read the server and the newest evacuation migration every poll; `done`/`completed` (the
 *   server idle on another host) → restore SHUTOFF (`os-stop`) or ERROR (reset) → `evacuated`;
 *   `error`/`failed`/`cancelled`, a refusal, or no record while the server shows no rebuild → one
 *   failed attempt: after EVACUATION_RETRIES of them the instance fails, else it is reset to error and
 *   evacuated again without a target host. EVACUATION_TIMEOUT counts from the first evacuate (or the
 *   in-progress migration's `created_at` on resume), so restarts cannot extend it; it is judged only
 *   after a look at Nova, so an instance idle on another host is restored and `evacuated` however
 *   late it is seen (a job taken over after the deadline), and only one still not landed fails for
 *   it. Always unlocked.
 * @throws InstanceEvacuationFailedError, EvacuationInterruptedError (shutdown), and the Nova client's
 *   network errors (the job is retried and reads again before writing)
 */
export class InstanceEvacuator {
  /** The reads of an instance every decision starts from (also the host job's verification). */
  readonly reads: InstanceReads;

  constructor(
    private readonly compute: ComputeApi,
    private readonly settings: InstanceEvacuationSettings,
    private readonly logger: Logger,
  ) {
    this.reads = new InstanceReads(compute, settings.migrationWindowMinutes);
  }

  private get tracked(): boolean {
    return this.settings.mode !== 'traditional';
  }

  async evacuate(
    target: InstanceEvacuationTarget,
    context: InstanceEvacuationContext,
  ): Promise<InstanceEvacuationResult> {
    const log = this.logger.child({ instanceId: target.instanceId, host: target.failedHost });
    if (context.progress.attempts === 0 && (await context.shouldStop())) {
      log.info(`Not evacuating ${target.instanceId}: the evacuation of ${target.failedHost} already stopped`);
      return { outcome: 'skipped', host: null, migrationStatus: null, attempts: 0, novaRequestId: null };
    }
    // A fresh instance's first look runs while the lock is taken (one round trip instead of two).
    const firstLook = context.progress.attempts === 0 ? this.reads.firstLook(target) : null;
    firstLook?.catch(() => undefined);
    try {
      await this.compute.lockServer(target.instanceId, EVACUATION_LOCK_REASON);
    } catch (error) {
      if (isNotFound(error)) return this.deleted(context.progress);
      log.warn({ err: error }, `could not lock ${target.instanceId}; evacuating it anyway`);
    }
    let keepLock = false;
    try {
      const result = await this.run(target, context, log, firstLook);
      keepLock = !this.tracked && (result.outcome === 'accepted' || result.outcome === 'already-evacuated');
      return result;
    } finally {
      if (!keepLock) await this.unlock(target.instanceId, log);
    }
  }

  /** Unlocks, ignoring a deleted server; other failures are logged. */
  async unlock(instanceId: string, log: Logger = this.logger): Promise<void> {
    try {
      await this.compute.unlockServer(instanceId);
    } catch (error) {
      if (!isNotFound(error)) log.warn({ err: error, instanceId }, `could not unlock ${instanceId}`);
    }
  }

  /** `os-stop` (was SHUTOFF) or reset to `error` (was ERROR); failures are logged, not thrown. */
  async restore(
    instanceId: string,
    action: 'stop' | 'reset-error',
    log: Logger = this.logger,
  ): Promise<void> {
    try {
      if (action === 'stop') await this.compute.stopServer(instanceId);
      else await this.compute.resetServerState(instanceId, 'error');
      log.info({ instanceId }, `Restoring ${instanceId} (${action})`);
    } catch (error) {
      log.warn({ err: error, instanceId }, `could not restore ${instanceId} (${action})`);
    }
  }

  private deleted(progress: InstanceEvacuationProgress): InstanceEvacuationResult {
    return {
      outcome: 'deleted',
      host: null,
      migrationStatus: null,
      attempts: progress.attempts,
      novaRequestId: progress.novaRequestId,
    };
  }

  /** @param firstLook the first look when already under way (used by the first pass only) */
  private async run(
    target: InstanceEvacuationTarget,
    context: InstanceEvacuationContext,
    log: Logger,
    firstLook: ReturnType<InstanceReads['firstLook']> | null = null,
  ): Promise<InstanceEvacuationResult> {
    const run: EvacuationRun = { target, context, log, progress: context.progress, apiErrors: 0 };
    let pendingLook = firstLook;
    for (;;) {
      throwIfInterrupted(target.instanceId, context.signal);
      const look = await this.lookAgain(run, pendingLook);
      pendingLook = null;
      if (look === 'read-failed') continue;
      if (look === 'deleted') return this.deleted(run.progress);
      const { server, latest, decision } = look;
      if (decision.kind === 'landed') {
        if (!this.tracked) {
          const outcome = run.progress.attempts > 0 ? 'accepted' : 'already-evacuated';
          return this.result(outcome, server, latest, run.progress);
        }
        // However late this look is (a job taken over after EVACUATION_TIMEOUT): Nova shows it evacuated.
        await this.settle(target, server, run.progress, context, log);
        const outcome = run.progress.attempts > 0 ? 'evacuated' : 'already-evacuated';
        return this.result(outcome, server, latest, run.progress);
      }
      // EVACUATION_TIMEOUT is judged only here, after a fresh look showed the instance not landed.
      if (this.tracked && this.pastDeadline(run.progress)) {
        throw this.failure(
          run,
          `not evacuated within EVACUATION_TIMEOUT (${this.settings.timeoutSeconds} s): ${notLanded(look)}`,
        );
      }
      if (decision.kind === 'in-progress') {
        if (!this.tracked) return this.result('accepted', server, latest, run.progress);
        if (run.progress.startedAt === null) {
          const created = novaTime(decision.migration?.created_at);
          await this.save(run, {
            startedAt: new Date(Number.isNaN(created) ? Date.now() : created).toISOString(),
          });
        }
        await sleep(this.settings.pollMilliseconds, target.instanceId, context.signal);
        continue;
      }
      const next = await this.evacuateAgain(run, look);
      if (next !== 'look-again') return next;
    }
  }

  /**
   * One look at Nova (the server is read on every look, also while the migration is under way: a
   * server deleted by its owner meanwhile shows only there). A failed read is counted and waited
   * out ('read-failed'); MAX_CONSECUTIVE_API_ERRORS in a row fail the instance.
   */
  private async lookAgain(
    run: EvacuationRun,
    pendingLook: ReturnType<InstanceReads['firstLook']> | null,
  ): Promise<Look | 'deleted' | 'read-failed'> {
    const { target } = run;
    let observed: Awaited<ReturnType<InstanceReads['read']>>;
    try {
      observed =
        run.progress.attempts === 0
          ? await (pendingLook ?? this.reads.firstLook(target))
          : await this.reads.read(target);
    } catch (error) {
      run.apiErrors++;
      run.log.warn(
        { err: error, apiErrors: run.apiErrors },
        `Nova API error while reading ${target.instanceId}`,
      );
      if (run.apiErrors >= this.settings.maxConsecutiveApiErrors) {
        throw this.failure(run, `${run.apiErrors} consecutive Nova API errors: ${(error as Error).message}`);
      }
      await sleep(this.settings.pollMilliseconds, target.instanceId, run.context.signal);
      return 'read-failed';
    }
    run.apiErrors = 0;
    if (observed === 'deleted') return 'deleted';
    const decision = decideInstance(
      observed.server,
      observed.latest,
      target.failedHost,
      run.progress.attempts > 0,
    );
    return { ...observed, decision };
  }

  /**
   * The `evacuate` decision: counts a failed attempt, stops at EVACUATION_RETRIES, re-reads the world
   * (the stop flag for a first attempt, then `context.recheckHost`), resets the task state, sends
   * the evacuate and records its answer.
   * @returns the result when the instance is done with, or 'look-again'
   */
  private async evacuateAgain(
    run: EvacuationRun,
    look: Look,
  ): Promise<InstanceEvacuationResult | 'look-again'> {
    const { target, context, log } = run;
    const { server, latest, decision } = look;
    const reason = decision.kind === 'evacuate' ? decision.reason : decision.kind;
    if (run.progress.awaitingResult) {
      await this.save(run, { awaitingResult: false, errors: run.progress.errors + 1 });
      log.warn(
        {
          errors: run.progress.errors,
          reason,
          serverHost: serverHost(server),
          taskState: server['OS-EXT-STS:task_state'] ?? null,
          status: server.status,
          migration: latest,
        },
        `Evacuation attempt ${run.progress.attempts} of ${target.instanceId} failed: ${reason}`,
      );
      if (!this.tracked) throw this.failure(run, reason);
    }
    this.throwIfOutOfRetries(run, reason);
    if (run.progress.attempts === 0 && (await context.shouldStop())) {
      log.info(`Not evacuating ${target.instanceId}: the evacuation of ${target.failedHost} already stopped`);
      return { outcome: 'skipped', host: null, migrationStatus: null, attempts: 0, novaRequestId: null };
    }
    const recheck = (await context.recheckHost?.()) ?? { kind: 'go' };
    if (recheck.kind === 'refuse') {
      throw this.failure(run, `${target.failedHost} may no longer be evacuated: ${recheck.reason}`);
    }
    if (recheck.kind === 'defer') {
      log.info(`Not evacuating ${target.instanceId} yet: ${recheck.reason}`);
      await sleep(this.settings.pollMilliseconds, target.instanceId, context.signal);
      return 'look-again';
    }
    // Persisted with the outcome of the evacuate below (one write per attempt); a crash in between
    // is resumed from the migration's own `created_at`.
    if (run.progress.startedAt === null)
      run.progress = { ...run.progress, startedAt: new Date().toISOString() };
    if (server['OS-EXT-STS:task_state'] || run.progress.attempts > 0) {
      await resetToError(this.compute, target.instanceId, server, log);
    }
    const answer = await sendEvacuate(
      this.compute,
      target,
      run.progress.attempts === 0 ? target.targetHost : null,
      log,
    );
    const attempts = run.progress.attempts + 1;
    if (answer.ok) {
      context.onAccepted?.(answer.requestId);
      await this.save(run, { attempts, awaitingResult: true, novaRequestId: answer.requestId });
      if (!this.tracked) return this.result('accepted', server, null, run.progress);
      await sleep(this.settings.firstCheckMilliseconds, target.instanceId, context.signal);
      return 'look-again';
    }
    context.onRefused?.(answer.requestId);
    await this.save(run, { attempts, errors: run.progress.errors + 1, novaRequestId: answer.requestId });
    if (!this.tracked) throw this.failure(run, `evacuate refused: ${answer.message}`);
    this.throwIfOutOfRetries(run, `evacuate refused: ${answer.message}`);
    await sleep(this.settings.pollMilliseconds, target.instanceId, context.signal);
    return 'look-again';
  }

  /** @throws InstanceEvacuationFailedError once EVACUATION_RETRIES attempts failed */
  private throwIfOutOfRetries(run: EvacuationRun, last: string): void {
    if (run.progress.errors >= this.settings.retries) {
      throw this.failure(
        run,
        `evacuation failed ${run.progress.errors} times (EVACUATION_RETRIES ${this.settings.retries}); last: ${last}`,
      );
    }
  }

  /** Records progress (the job's progress), awaited before the next step. */
  private async save(run: EvacuationRun, next: Partial<InstanceEvacuationProgress>): Promise<void> {
    run.progress = { ...run.progress, ...next };
    await run.context.saveProgress(run.progress);
  }

  private failure(run: EvacuationRun, reason: string): InstanceEvacuationFailedError {
    return new InstanceEvacuationFailedError(
      run.target.instanceId,
      reason,
      run.progress.attempts,
      run.progress.novaRequestId,
    );
  }

  /** True once EVACUATION_TIMEOUT has passed since `startedAt` (never before anything was started). */
  private pastDeadline(progress: InstanceEvacuationProgress): boolean {
    if (progress.startedAt === null) return false;
    return Date.now() > Date.parse(progress.startedAt) + this.settings.timeoutSeconds * 1000;
  }

  private result(
    outcome: InstanceEvacuationResult['outcome'],
    server: Server,
    latest: Migration | null,
    progress: InstanceEvacuationProgress,
  ): InstanceEvacuationResult {
    return {
      outcome,
      host: serverHost(server),
      migrationStatus: latest?.status ?? null,
      attempts: progress.attempts,
      novaRequestId: progress.novaRequestId,
    };
  }

  /**
   * Brings a landed instance back to its original state (SHUTOFF → `os-stop`, ERROR → reset) and
   * waits until Nova shows it, within EVACUATION_TIMEOUT but at least RESTORE_GRACE_SECONDS after it
   * was seen landed; each look is judged before the deadline.
   * @throws InstanceEvacuationFailedError when it ended in another state or the time ran out
   */
  private async settle(
    target: InstanceEvacuationTarget,
    landed: Server,
    progress: InstanceEvacuationProgress,
    context: InstanceEvacuationContext,
    log: Logger,
  ): Promise<void> {
    const started = progress.startedAt ? Date.parse(progress.startedAt) : Date.now();
    const deadline = Math.max(
      started + this.settings.timeoutSeconds * 1000,
      Date.now() + RESTORE_GRACE_SECONDS * 1000,
    );
    let server = landed;
    let requests = 0;
    for (;;) {
      const action = settleAction(server, target.originalStatus);
      if (action.kind === 'settled') return;
      if (action.kind === 'failed') {
        throw new InstanceEvacuationFailedError(
          target.instanceId,
          action.reason,
          progress.attempts,
          progress.novaRequestId,
        );
      }
      if (Date.now() > deadline) {
        throw new InstanceEvacuationFailedError(
          target.instanceId,
          `landed on ${serverHost(server)} but did not return to ${target.originalStatus} in time`,
          progress.attempts,
          progress.novaRequestId,
        );
      }
      if ((action.kind === 'stop' || action.kind === 'reset-error') && requests < 3) {
        requests++;
        await this.restore(target.instanceId, action.kind, log);
        if (action.kind === 'reset-error') {
          server = await this.compute.getServer(target.instanceId);
          continue;
        }
      }
      await sleep(this.settings.pollMilliseconds, target.instanceId, context.signal);
      server = await this.compute.getServer(target.instanceId);
    }
  }
}
