import type { Migration } from '@lifeguard/openstack';
import type { ClaimAnswer } from '@lifeguard/runtime';
import type { EvacuationPolicy } from '../policy/evacuation-policy.ts';
import { type InstanceDecision, novaTime } from './decide.ts';
import { evacuateClaimVerdict } from './evacuate-claim.ts';
import { evacuateTarget, retriesAfterNoValidHost } from './evacuate-target.ts';
import type { HostRecheck } from './host-recheck.ts';
import type { InstanceEvacuationProgress, InstanceEvacuationTarget } from './instance-evacuation-types.ts';
import { type Look, notLanded } from './instance-reads.ts';
import type { EvacuateAnswer } from './send-evacuate.ts';

/** One look at Nova: the instance seen (with the read-before-write decision), deleted, or a failed read. */
export type InstanceObservation =
  /** `at`: when the look ended, in milliseconds since the epoch (EVACUATION_TIMEOUT is judged at it). */
  | { readonly kind: 'seen'; readonly look: Look; readonly at: number }
  /** Nova answered 404 for the server: its owner deleted it. */
  | { readonly kind: 'deleted' }
  /** The read failed; `apiErrors` counts the failed reads in a row, this one included. */
  | { readonly kind: 'read-failed'; readonly apiErrors: number; readonly message: string };

/**
 * What the instance loop knows when it decides: the progress kept in the job, the time, this
 * iteration's look at Nova, and what it read since that look because an earlier decision asked for it
 * (the host's stop flag, the host re-check, Nova's answer to the evacuate just sent).
 */
export interface InstanceSnapshot {
  readonly target: Pick<InstanceEvacuationTarget, 'failedHost' | 'targetHost' | 'targetHostUse'>;
  readonly progress: InstanceEvacuationProgress;
  /** When the decision is made, in milliseconds since the epoch (the times it records). */
  readonly now: number;
  readonly observation: InstanceObservation;
  /** The host's stop flag, once read (read-stop-flag): its evacuation already stopped on a failed instance. */
  readonly stopped?: boolean;
  /** The world looked at again (recheck-host), once read. */
  readonly recheck?: HostRecheck;
  /** The evacuate claim (take-claim), once asked for: only its holder sends (evacuateClaimVerdict). */
  readonly claim?: ClaimAnswer;
  /** Nova's answer to the evacuate sent after this look (send-evacuate), once sent. */
  readonly answer?: EvacuateAnswer;
}

/**
 * What the decision asks the loop to record before it acts: `save` — progress to persist (the job's
 * progress, awaited before the act, so that a crash in the act resumes from it); `failedAttempt` — the
 * reason the last accepted evacuate went nowhere (logged, and counted in `save.errors`).
 */
export interface Recording {
  readonly save?: Partial<InstanceEvacuationProgress>;
  readonly failedAttempt?: string;
}

/** Why the loop waits before its next look. */
export type WaitReason = 'read-failed' | 'in-progress' | 'deferred' | 'claimed' | 'accepted' | 'refused';

/** One step of an instance's evacuation, without what it records. */
export type InstanceStep =
  /** Wait (the poll, or the first-check wait after an accepted evacuate), then look again; `reason` of a deferral. */
  | {
      readonly kind: 'wait';
      readonly wait: 'poll' | 'first-check';
      readonly why: WaitReason;
      readonly reason?: string;
    }
  /** Read the host's stop flag, then decide again (before a first evacuate only). */
  | { readonly kind: 'read-stop-flag' }
  /** Look at the world again (the host's gates), then decide again (before every evacuate request). */
  | { readonly kind: 'recheck-host' }
  /**
   * Check that this run still holds its job's lock and take the evacuate claim of the instance, then
   * decide again (before every evacuate request, after the world's re-check).
   */
  | { readonly kind: 'take-claim' }
  /** Look at Nova again at once, without waiting (the claim was just taken from an earlier holder). */
  | { readonly kind: 'look-again' }
  /**
   * Reset to `error` first when `resetFirst`, send the evacuate (with `targetHost` when not null), then
   * decide again with Nova's answer; `watchingSince` is when EVACUATION_TIMEOUT starts counting (kept
   * in memory, persisted with the answer).
   */
  | {
      readonly kind: 'send-evacuate';
      readonly targetHost: string | null;
      readonly resetFirst: boolean;
      readonly watchingSince: string;
    }
  /** Landed: restore its original state and wait until Nova shows it, then done with `outcome`. */
  | { readonly kind: 'settle'; readonly outcome: 'evacuated' | 'already-evacuated' }
  /** Done without following it further (the host job's verification settles it). */
  | {
      readonly kind: 'done-accepted';
      readonly outcome: 'accepted' | 'already-evacuated';
      readonly migration: Migration | null;
    }
  /** Done: its owner deleted the server. */
  | { readonly kind: 'done-deleted' }
  /** Done without a request: the host's evacuation already stopped. */
  | { readonly kind: 'done-skipped' }
  /** The instance failed (InstanceEvacuationFailedError with `reason`). */
  | { readonly kind: 'fail'; readonly reason: string };

/** The next step of one instance's evacuation and what to record before it (docs/instance-ha-rules.md#evacuation-policy). */
export type InstanceAction = Recording & InstanceStep;

/**
 * The next step of one instance's evacuation, from the policy and what the loop knows (pure: no I/O,
 * the time is the snapshot's). The instance loop reads, calls this, records what it says, acts, and
 * reads again; the policy's answers (docs/instance-ha-rules.md#evacuation-policy) decide:
 * - a failed read waits a poll; `maxConsecutiveApiErrors` in a row fail the instance;
 * - deleted by its owner → done-deleted (every mode);
 * - landed (idle on another host): followed to completion → settle (`evacuated`, or `already-evacuated`
 *   when no evacuate was sent); else done-accepted (`accepted` / `already-evacuated`);
 * - followed to completion and EVACUATION_TIMEOUT past since watching started → fail (judged only after
 *   a look, so a landed instance is accepted however late it is seen);
 * - in progress: not followed → done-accepted; else wait a poll (recording when watching started,
 *   from the migration's `created_at`, on a resume);
 * - otherwise (evacuate): see beforeEvacuate and afterAnswer.
 */
export function nextInstanceAction(policy: EvacuationPolicy, snapshot: InstanceSnapshot): InstanceAction {
  if (snapshot.answer !== undefined) return afterAnswer(policy, snapshot, snapshot.answer);
  const { observation, progress } = snapshot;
  if (observation.kind === 'read-failed') {
    if (observation.apiErrors >= policy.maxConsecutiveApiErrors) {
      return {
        kind: 'fail',
        reason: `${observation.apiErrors} consecutive Nova API errors: ${observation.message}`,
      };
    }
    return { kind: 'wait', wait: 'poll', why: 'read-failed' };
  }
  if (observation.kind === 'deleted') return { kind: 'done-deleted' };
  const { look } = observation;
  const { decision } = look;
  if (decision.kind === 'landed') {
    if (policy.followsEvacuationToCompletion) {
      return { kind: 'settle', outcome: progress.attempts > 0 ? 'evacuated' : 'already-evacuated' };
    }
    const outcome = progress.attempts > 0 ? 'accepted' : 'already-evacuated';
    return { kind: 'done-accepted', outcome, migration: look.latest };
  }
  if (policy.followsEvacuationToCompletion && pastDeadline(policy, progress, observation.at)) {
    return {
      kind: 'fail',
      reason: `not evacuated within EVACUATION_TIMEOUT (${policy.timeoutSeconds} s): ${notLanded(look)}`,
    };
  }
  if (decision.kind === 'in-progress') {
    if (!policy.followsEvacuationToCompletion) {
      return { kind: 'done-accepted', outcome: 'accepted', migration: look.latest };
    }
    if (progress.startedAt !== null) return { kind: 'wait', wait: 'poll', why: 'in-progress' };
    const created = novaTime(decision.migration?.created_at);
    const startedAt = new Date(Number.isNaN(created) ? snapshot.now : created).toISOString();
    return { kind: 'wait', wait: 'poll', why: 'in-progress', save: { startedAt } };
  }
  return beforeEvacuate(policy, snapshot, look, decision);
}

/**
 * The `evacuate` decision, before a request: an accepted evacuate that went nowhere is a failed attempt
 * (recorded; `fails-instance` fails at once, and so does one that ended in Nova's NoValidHost: sent
 * again at once it would only fail again); EVACUATION_RETRIES failed attempts fail the instance; a
 * first attempt reads the host's stop flag (set: done-skipped); every request looks at the world again
 * (refuse: fail; defer: wait a poll) and is sent only under the instance's evacuate claim
 * (evacuateClaimVerdict: look again, or wait a poll while another run holds it); then reset (a task
 * state set, or a retry) and send, to the reserved host on the attempts evacuateTarget names it for
 * (the first only, unless a segment's recovery_method says otherwise). A NoValidHost is tried again
 * when the next attempt goes elsewhere (retriesAfterNoValidHost).
 */
function beforeEvacuate(
  policy: EvacuationPolicy,
  snapshot: InstanceSnapshot,
  look: Look,
  decision: Extract<InstanceDecision, { kind: 'evacuate' }>,
): InstanceAction {
  const { reason } = decision;
  let { progress } = snapshot;
  let record: Recording = {};
  if (progress.awaitingResult) {
    const save = { awaitingResult: false, errors: progress.errors + 1 };
    record = { save, failedAttempt: reason };
    progress = { ...progress, ...save };
    if (policy.failedAttempt === 'fails-instance') return { kind: 'fail', reason, ...record };
    if (
      decision.noValidHost &&
      !retriesAfterNoValidHost(use(snapshot), snapshot.target.targetHost, progress.attempts)
    ) {
      return {
        kind: 'fail',
        reason: `${reason}; not retried: no compute host can take it until an operator makes room`,
        ...record,
      };
    }
  }
  const outOfRetries = retriesExhausted(policy, progress, reason);
  if (outOfRetries !== null) return { kind: 'fail', reason: outOfRetries, ...record };
  if (progress.attempts === 0) {
    if (snapshot.stopped === undefined) return { kind: 'read-stop-flag', ...record };
    if (snapshot.stopped) return { kind: 'done-skipped', ...record };
  }
  const { recheck } = snapshot;
  if (recheck === undefined) return { kind: 'recheck-host', ...record };
  if (recheck.kind === 'refuse') {
    return {
      kind: 'fail',
      reason: `${snapshot.target.failedHost} may no longer be evacuated: ${recheck.reason}`,
    };
  }
  if (recheck.kind === 'defer')
    return { kind: 'wait', wait: 'poll', why: 'deferred', reason: recheck.reason };
  if (snapshot.claim === undefined) return { kind: 'take-claim' };
  const claimed = evacuateClaimVerdict(snapshot.claim, look.latest);
  if (claimed.kind === 'look-again') return { kind: 'look-again' };
  if (claimed.kind !== 'evacuate')
    return { kind: 'wait', wait: 'poll', why: 'claimed', reason: claimed.reason };
  return {
    kind: 'send-evacuate',
    targetHost: evacuateTarget(use(snapshot), snapshot.target.targetHost, progress.attempts),
    resetFirst: Boolean(look.server['OS-EXT-STS:task_state']) || progress.attempts > 0,
    watchingSince: progress.startedAt ?? new Date(snapshot.now).toISOString(),
  };
}

/**
 * Nova's answer to the evacuate just sent, counted as an attempt: accepted → followed to completion:
 * wait the first-check wait, else done-accepted; refused → a failed attempt: `fails-instance` fails at
 * once, `retried` fails at EVACUATION_RETRIES, else waits a poll and looks again.
 */
function afterAnswer(
  policy: EvacuationPolicy,
  snapshot: InstanceSnapshot,
  answer: EvacuateAnswer,
): InstanceAction {
  const { progress } = snapshot;
  const attempts = progress.attempts + 1;
  if (answer.ok) {
    const save = { attempts, awaitingResult: true, novaRequestId: answer.requestId };
    if (!policy.followsEvacuationToCompletion) {
      return { kind: 'done-accepted', outcome: 'accepted', migration: null, save };
    }
    return { kind: 'wait', wait: 'first-check', why: 'accepted', save };
  }
  const save = { attempts, errors: progress.errors + 1, novaRequestId: answer.requestId };
  const refused = `evacuate refused: ${answer.message}`;
  if (policy.failedAttempt === 'fails-instance') return { kind: 'fail', reason: refused, save };
  const outOfRetries = retriesExhausted(policy, { ...progress, ...save }, refused);
  if (outOfRetries !== null) return { kind: 'fail', reason: outOfRetries, save };
  return { kind: 'wait', wait: 'poll', why: 'refused', save };
}

/** How the instance's requests use its reserved host. */
function use(snapshot: InstanceSnapshot) {
  return snapshot.target.targetHostUse ?? 'first-attempt';
}

/** The failure reason once EVACUATION_RETRIES attempts failed, else null. */
function retriesExhausted(
  policy: EvacuationPolicy,
  progress: InstanceEvacuationProgress,
  last: string,
): string | null {
  if (progress.errors < policy.retries) return null;
  return `evacuation failed ${progress.errors} times (EVACUATION_RETRIES ${policy.retries}); last: ${last}`;
}

/** True once EVACUATION_TIMEOUT had passed since `startedAt` at `now` (never before anything was started). */
function pastDeadline(policy: EvacuationPolicy, progress: InstanceEvacuationProgress, now: number): boolean {
  if (progress.startedAt === null) return false;
  return now > Date.parse(progress.startedAt) + policy.timeoutSeconds * 1000;
}
