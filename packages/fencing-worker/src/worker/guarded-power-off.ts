import { randomUUID } from 'node:crypto';
import type { FenceRecord, IncidentStore } from '@lifeguard/instance-ha';
import { type ActionClaims, assertJobLock, type Logger, redisKey } from '@lifeguard/runtime';
import type { Job } from 'bullmq';
import { BlankMemoryError, FenceDeferredError } from '../errors.ts';
import type { HostFencer, PowerOffResult } from '../fencing/host-fencer.ts';
import { POWER_OFF_CLAIM_GATE, powerOffClaimVerdict } from './power-off-claim.ts';

/** A power-off claim outlives its holder's last renewal by this many job-lock durations. */
export const POWER_OFF_CLAIM_LOCK_DURATIONS = 3;

/** What the power-off under the claim needs. */
export interface GuardedPowerOffDependencies {
  readonly claims: ActionClaims;
  readonly incidents: IncidentStore;
  readonly fencer: HostFencer;
  readonly keyPrefix: string;
  /** This process's name (LIFEGUARD_INSTANCE_NAME), shown to a run that finds the claim held. */
  readonly processName: string;
  /** The job lock's duration (LIFEGUARD_JOB_LOCK_SECONDS), in milliseconds. */
  readonly jobLockMilliseconds: number;
}

/** How the guarded power-off ended: the host powered off by this run, or a fence already recorded. */
export type GuardedPowerOffOutcome =
  | { readonly kind: 'powered-off'; readonly result: PowerOffResult }
  | { readonly kind: 'recorded'; readonly record: FenceRecord };

/**
 * One run of a fence job powering its host off under the incident's power-off claim (key
 * `<prefix>:fencing-worker:incident:<id>:power-off-claim`), so that a run BullMQ handed the job to
 * after the first run's lock lapsed (the first run only slow) does not power the host off a second
 * time: just before the power-off the run checks that it still holds its job's lock, takes the claim,
 * reads the incident again and follows powerOffClaimVerdict. While the power-off runs the claim is
 * renewed every third of its lifetime (POWER_OFF_CLAIM_LOCK_DURATIONS job locks); the run releases it
 * once the fence is recorded (release), or it runs out after a holder that died. A power-off is
 * idempotent (a second one confirms "already off") and the first fence record wins, so a claim that
 * ran out only costs a second power command, never a second fence.
 */
export class GuardedPowerOff {
  private readonly token: string;
  private claimed = false;

  constructor(
    private readonly deps: GuardedPowerOffDependencies,
    private readonly job: Pick<Job, 'id' | 'extendLock'>,
    private readonly lockToken: string | undefined,
    private readonly incidentId: string,
  ) {
    this.token = lockToken ?? randomUUID();
  }

  private get key(): string {
    return redisKey(this.deps.keyPrefix, 'fencing-worker', 'incident', this.incidentId, 'power-off-claim');
  }

  private get lifetimeMilliseconds(): number {
    return this.deps.jobLockMilliseconds * POWER_OFF_CLAIM_LOCK_DURATIONS;
  }

  private take() {
    const holder = { token: this.token, name: this.deps.processName };
    return this.deps.claims.take(this.key, holder, this.lifetimeMilliseconds);
  }

  /**
   * @throws JobLockLostError (this run no longer holds the job: nothing is powered off),
   *   FenceDeferredError (another run holds the claim: look again after one job lock), BlankMemoryError
   *   (the incident is no longer in Redis), and the fencer's errors
   */
  async powerOff(host: string, logger: Logger): Promise<GuardedPowerOffOutcome> {
    await assertJobLock(this.job, this.lockToken, this.deps.jobLockMilliseconds);
    const claim = await this.take();
    if (claim.kind !== 'held') this.claimed = true;
    const incident = await this.deps.incidents.get(this.incidentId);
    if (incident === null)
      throw new BlankMemoryError('no-incident', `incident ${this.incidentId} is no longer in Redis`);
    const verdict = powerOffClaimVerdict(claim, incident.fence !== null);
    if (verdict.kind === 'wait') {
      const retryInSeconds = this.deps.jobLockMilliseconds / 1000;
      throw new FenceDeferredError(POWER_OFF_CLAIM_GATE, verdict.reason, retryInSeconds);
    }
    if (verdict.kind === 'use-record' && incident.fence !== null) {
      logger.info({ proof: incident.fence.proof }, 'fence recorded meanwhile; not powering off again');
      return { kind: 'recorded', record: incident.fence };
    }
    const renewal = setInterval(
      () => void this.take().catch(() => undefined),
      Math.max(100, this.lifetimeMilliseconds / 3),
    );
    try {
      return { kind: 'powered-off', result: await this.deps.fencer.powerOff(host, logger) };
    } finally {
      clearInterval(renewal);
    }
  }

  /** Releases the claim if this run took it (after the fence was recorded, or the run ended without). */
  async release(logger: Logger): Promise<void> {
    if (!this.claimed) return;
    this.claimed = false;
    await this.deps.claims
      .release(this.key, this.token)
      .catch((error: unknown) => logger.warn({ err: error }, 'could not release the power-off claim'));
  }
}
