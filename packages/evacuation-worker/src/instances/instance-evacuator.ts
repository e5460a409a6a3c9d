import type { ComputeApi, Migration, Server } from '@lifeguard/openstack';
import type { Logger } from 'pino';
import { InstanceEvacuationFailedError } from '../errors.ts';
import { decideInstance, serverHost } from './decide.ts';
import type { HostRecheck } from './host-recheck.ts';
import type {
  InstanceEvacuationContext,
  InstanceEvacuationProgress,
  InstanceEvacuationResult,
  InstanceEvacuationSettings,
  InstanceEvacuationTarget,
} from './instance-evacuation-types.ts';
import { InstanceReads, isNotFound } from './instance-reads.ts';
import { sleep, throwIfInterrupted } from './interruptible-sleep.ts';
import {
  type InstanceAction,
  type InstanceObservation,
  type InstanceSnapshot,
  nextInstanceAction,
} from './next-instance-action.ts';
import { evacuateAttempt, resetToError } from './send-evacuate.ts';
import { lockForEvacuation, unlockAfterEvacuation } from './server-lock.ts';
import { restoreOriginalState, settleLanded } from './settle-landed.ts';

/** One instance's evacuation in this job: what it acts on, its progress so far, and its read errors. */
interface EvacuationRun {
  readonly target: InstanceEvacuationTarget;
  readonly context: InstanceEvacuationContext;
  readonly log: Logger;
  progress: InstanceEvacuationProgress;
  /** Consecutive failed reads. */
  apiErrors: number;
  /**
   * A fresh instance's host re-check, started beside its first look and its lock (earlyRecheck);
   * taken by the first decision that asks for a re-check before any wait, else dropped.
   */
  earlyRecheck: Promise<HostRecheck> | null;
  /** The server as the last look read it after the lock, while nothing was sent since (the unlock's read). */
  current: Server | null;
}

/** What one iteration of the instance loop has read: its look at Nova and what the decisions asked for since. */
type Reads = Pick<InstanceSnapshot, 'observation' | 'stopped' | 'recheck' | 'claim' | 'answer'>;

const SKIPPED: InstanceEvacuationResult = {
  outcome: 'skipped',
  host: null,
  migrationStatus: null,
  attempts: 0,
  novaRequestId: null,
};

/**
 * Evacuates one instance of a fenced host (docs/instance-ha-rules.md#evacuation-policy, #smart_evacuation,
 * docs/nova-facts.md#evacuation-in-nova to #servers), reading before writing so that a retried, stalled
 * or resumed job never evacuates twice: the server and this incident's newest evacuation migration
 * decide whether to evacuate, watch, or only restore (see decideInstance).
 *
 * The instance loop reads (a look at Nova; then, when the decision asks, the host's stop flag, the
 * world again, or Nova's answer to the evacuate), decides with the pure nextInstanceAction over the
 * evacuation policy, records the progress that decision names (the job's progress, awaited), and acts;
 * every rule of the modes is there and in EvacuationPolicy.
 *
 * Before every evacuate request (the first, a retry, after a takeover or a restart) the world is
 * looked at again (`context.recheckHost`, the gates of the host's first decision): a host that may no
 * longer be evacuated fails the instance; a gate that says "not now" waits a poll.
 *
 * Every mode: lock with reason `lifeguard-evacuation` (failure ignored; a fresh instance's first read
 * runs meanwhile), reset a non-null task state to `error` before evacuating, evacuate (with the
 * reserved host as `host` when given; on 409/500 retried once without it), log `Evacuation accepted for
 * <id> (nova-req: <req-id>)`; a server Nova answers 404 for (its owner deleted it, before or during its
 * evacuation) ends the instance as `deleted`, never as a failure.
 * - not followed to completion (traditional): done when Nova accepts (outcome `accepted`); the lock is
 *   kept and the host job verifies, restores and unlocks. A refusal fails the instance at once.
 * - followed to completion (smart / orchestrated): read the server and the newest evacuation migration
 *   every poll; `done`/`completed` (the server idle on another host) → restore SHUTOFF (`os-stop`) or
 *   ERROR (reset) → `evacuated`; `error`/`failed`/`cancelled`, a refusal, or no record while the server
 *   shows no rebuild → one failed attempt: after EVACUATION_RETRIES of them the instance fails, else it
 *   is reset to error and evacuated again without a target host. EVACUATION_TIMEOUT counts from the
 *   first evacuate (or the in-progress migration's `created_at` on resume), so restarts cannot extend
 *   it; it is judged only after a look at Nova, so an instance idle on another host is restored and
 *   `evacuated` however late it is seen (a job taken over after the deadline), and only one still not
 *   landed fails for it. Always unlocked.
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

  async evacuate(
    target: InstanceEvacuationTarget,
    context: InstanceEvacuationContext,
  ): Promise<InstanceEvacuationResult> {
    const log = this.logger.child({ instanceId: target.instanceId, host: target.failedHost });
    if (context.progress.attempts === 0 && (await context.shouldStop())) {
      log.info(`Not evacuating ${target.instanceId}: the evacuation of ${target.failedHost} already stopped`);
      return SKIPPED;
    }
    const earlyRecheck = context.progress.attempts === 0 ? this.earlyRecheck(context) : null;
    // The server is read before it is locked: a lock someone else holds is kept (server-lock.ts).
    const firstLook =
      context.progress.attempts === 0 ? await this.reads.firstLook(target).catch(() => null) : null;
    const server = await this.currentServer(target.instanceId, firstLook);
    if (server === 'deleted') return this.deleted(context.progress);
    if ((await lockForEvacuation(this.compute, server, log)) === 'deleted')
      return this.deleted(context.progress);
    let keepLock = false;
    const run: EvacuationRun = {
      target,
      context,
      log,
      progress: context.progress,
      apiErrors: 0,
      earlyRecheck,
      current: null,
    };
    try {
      const result = await this.run(run, firstLook && Promise.resolve(firstLook));
      keepLock =
        this.settings.policy.keepsLockAfterAcceptance &&
        (result.outcome === 'accepted' || result.outcome === 'already-evacuated');
      return result;
    } finally {
      if (!keepLock) await unlockAfterEvacuation(this.compute, target.instanceId, log, run.current);
    }
  }

  /**
   * The host re-check of a fresh instance, started at once: it reads the world while the first look and
   * the lock are under way, and ends before any evacuate is sent, so the request goes out one Nova
   * round trip sooner on no older a view than a re-check read after the lock. Unused (the server
   * deleted, the host's evacuation stopped, a wait first), it is dropped, its failure with it.
   */
  private earlyRecheck(context: InstanceEvacuationContext): Promise<HostRecheck> | null {
    if (context.recheckHost === undefined) return null;
    const recheck = context.recheckHost();
    recheck.catch(() => undefined);
    return recheck;
  }

  /** Lifts lifeguard's lock, never someone else's (unlockAfterEvacuation). */
  async unlock(instanceId: string, log: Logger = this.logger): Promise<void> {
    await unlockAfterEvacuation(this.compute, instanceId, log);
  }

  /** The server as the first look read it, or read now; `deleted` when Nova no longer has it. */
  private async currentServer(
    instanceId: string,
    firstLook: Awaited<ReturnType<InstanceReads['firstLook']>> | null,
  ): Promise<Server | 'deleted'> {
    if (firstLook !== null) return firstLook === 'deleted' ? 'deleted' : firstLook.server;
    try {
      return await this.compute.getServer(instanceId);
    } catch (error) {
      if (isNotFound(error)) return 'deleted';
      throw error;
    }
  }

  /** `os-stop` (was SHUTOFF) or reset to `error` (was ERROR); failures are logged, not thrown. */
  restore(instanceId: string, action: 'stop' | 'reset-error', log: Logger = this.logger): Promise<void> {
    return restoreOriginalState(this.compute, instanceId, action, log);
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

  /**
   * The instance loop: read → decide (nextInstanceAction) → record (the progress the decision names,
   * persisted before its act, so a crash in the act resumes from it) → act, until an act ends it. A new
   * look at Nova is taken after every wait; the reads a decision asks for (stop flag, re-check, Nova's
   * answer) are added to the same iteration's reads and decided on again.
   * @param firstLook the first look, read before the lock, when already under way (first pass only)
   */
  private async run(
    run: EvacuationRun,
    firstLook: ReturnType<InstanceReads['firstLook']> | null,
  ): Promise<InstanceEvacuationResult> {
    const { target, context } = run;
    let pendingLook = firstLook;
    let reads: Reads | null = null;
    for (;;) {
      if (reads === null) {
        throwIfInterrupted(target.instanceId, context.signal);
        reads = { observation: await this.observe(run, pendingLook) };
        pendingLook = null;
      }
      const action = nextInstanceAction(this.settings.policy, {
        ...reads,
        target,
        progress: run.progress,
        now: Date.now(),
      });
      await this.record(run, action, reads.observation);
      const next = await this.act(run, action, reads);
      if (next === 'look-again') reads = null;
      else if ('outcome' in next) return next;
      else reads = next;
    }
  }

  /**
   * One look at Nova (the server is read on every look, also while the migration is under way: a
   * server deleted by its owner meanwhile shows only there). A failed read is counted and logged
   * ('read-failed'; the decision waits it out or, at MAX_CONSECUTIVE_API_ERRORS in a row, fails).
   */
  private async observe(
    run: EvacuationRun,
    pendingLook: ReturnType<InstanceReads['firstLook']> | null,
  ): Promise<InstanceObservation> {
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
      return { kind: 'read-failed', apiErrors: run.apiErrors, message: (error as Error).message };
    }
    run.apiErrors = 0;
    // A look read before the lock does not show it: the unlock reads the server itself then.
    run.current = observed !== 'deleted' && pendingLook === null ? observed.server : null;
    if (observed === 'deleted') return { kind: 'deleted' };
    const decision = decideInstance(
      observed.server,
      observed.latest,
      target.failedHost,
      run.progress.attempts > 0,
    );
    return { kind: 'seen', look: { ...observed, decision }, at: Date.now() };
  }

  /** Persists the progress an action names and logs a failed attempt it records. */
  private async record(run: EvacuationRun, action: InstanceAction, observation: InstanceObservation) {
    if (action.save !== undefined) await this.save(run, action.save);
    if (action.failedAttempt === undefined || observation.kind !== 'seen') return;
    const { server, latest } = observation.look;
    run.log.warn(
      {
        errors: run.progress.errors,
        reason: action.failedAttempt,
        serverHost: serverHost(server),
        taskState: server['OS-EXT-STS:task_state'] ?? null,
        status: server.status,
        migration: latest,
      },
      `Evacuation attempt ${run.progress.attempts} of ${run.target.instanceId} failed: ${action.failedAttempt}`,
    );
  }

  /**
   * Carries out one action: waits, reads what the decision asked for, sends the evacuate, settles, or
   * ends the instance.
   * @returns the result when the instance is done with, the reads to decide on again, or 'look-again'
   */
  private async act(
    run: EvacuationRun,
    action: InstanceAction,
    reads: Reads,
  ): Promise<InstanceEvacuationResult | Reads | 'look-again'> {
    const { target, context, log } = run;
    const look = reads.observation.kind === 'seen' ? reads.observation.look : null;
    switch (action.kind) {
      case 'wait': {
        // After a wait the world is read again: an early re-check is too old to act on.
        run.earlyRecheck = null;
        run.current = null;
        if (action.why === 'deferred' || action.why === 'claimed')
          log.info(`Not evacuating ${target.instanceId} yet: ${action.reason}`);
        const wait =
          action.wait === 'first-check'
            ? this.settings.firstCheckMilliseconds
            : this.settings.pollMilliseconds;
        await sleep(wait, target.instanceId, context.signal);
        return 'look-again';
      }
      case 'read-stop-flag':
        return { ...reads, stopped: await context.shouldStop() };
      case 'recheck-host': {
        const early = run.earlyRecheck;
        run.earlyRecheck = null;
        return { ...reads, recheck: (await (early ?? context.recheckHost?.())) ?? { kind: 'go' } };
      }
      case 'take-claim':
        return { ...reads, claim: (await context.claimEvacuate?.()) ?? { kind: 'mine', generation: 1 } };
      case 'look-again':
        // The look predates the claim just taken: read Nova again, with a fresh re-check after it.
        run.earlyRecheck = null;
        run.current = null;
        return 'look-again';
      case 'send-evacuate':
        run.current = null;
        return { ...reads, answer: await this.send(run, action, look!.server) };
      case 'settle': {
        // However late this look is (a job taken over after EVACUATION_TIMEOUT): Nova shows it evacuated.
        const reread = await settleLanded(
          {
            compute: this.compute,
            settings: this.settings,
            restore: (id, kind) => this.restore(id, kind, log),
          },
          { target, landed: look!.server, progress: run.progress, signal: context.signal },
        );
        if (reread !== null) run.current = reread;
        return this.result(action.outcome, look!.server, look!.latest, run.progress);
      }
      case 'done-accepted':
        return this.result(action.outcome, look!.server, action.migration, run.progress);
      case 'done-deleted':
        return this.deleted(run.progress);
      case 'done-skipped':
        log.info(
          `Not evacuating ${target.instanceId}: the evacuation of ${target.failedHost} already stopped`,
        );
        return SKIPPED;
      case 'fail':
        throw this.failure(run, action.reason);
    }
  }

  /**
   * Resets the task state when the decision says so and sends the evacuate; `startedAt` is set in
   * memory and persisted with the answer (one write per attempt; a crash in between is resumed from the
   * migration's own `created_at`).
   */
  private async send(
    run: EvacuationRun,
    action: Extract<InstanceAction, { kind: 'send-evacuate' }>,
    server: Server,
  ) {
    const { target, context, log } = run;
    run.progress = { ...run.progress, startedAt: action.watchingSince };
    if (action.resetFirst) await resetToError(this.compute, target.instanceId, server, log);
    const answer = await evacuateAttempt(this.compute, target, action.targetHost, context, log);
    if (answer.ok) context.onAccepted?.(answer.requestId);
    else context.onRefused?.(answer.requestId);
    return answer;
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
}
