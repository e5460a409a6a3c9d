import { INSTANCE_HA_CONSTANTS, pollRetrySeconds } from '@lifeguard/instance-ha';
import type { Logger } from '@lifeguard/runtime';
import type { NodeMonitorMetrics } from './metrics.ts';
import { secondsUntilNextPoll } from './next-poll.ts';
import type { CycleReport } from './poll-cycle.ts';
import { PollDeadlineError, pollDeadlineMilliseconds } from './poll-deadline.ts';

export interface PollLoopOptions {
  /** Runs one cycle, bounded by `deadline` (it aborts POLL + a few seconds after the start); throws when the poll failed. */
  runCycle: (deadline: AbortSignal) => Promise<CycleReport>;
  /** True while this replica holds the leader lease. */
  isLeader: () => boolean;
  /** POLL, seconds. */
  pollSeconds: number;
  /** How long a cycle may run before it is aborted, in milliseconds; pollDeadlineMilliseconds(POLL) by default (tests shorten it). */
  pollDeadlineMilliseconds?: number;
  /** How often a standby checks whether it became leader, in milliseconds. */
  standbyCheckMilliseconds: number;
  logger: Logger;
  metrics: NodeMonitorMetrics;
  /** Called after each cycle (tests). */
  onCycle?: (report: CycleReport) => void;
  /** Called after each failed poll, with how many failed in a row (the operator tools show it). */
  onFailure?: (failure: { at: Date; consecutiveFailures: number; error: unknown }) => void;
  /** Called with each wait the loop plans before it sleeps, in milliseconds (tests). */
  onSleep?: (milliseconds: number) => void;
}

/**
 * The poll loop (docs/instance-ha-rules.md#poll): while this replica leads, run a cycle, then sleep
 * POLL seconds — or less when the cycle asks for an early poll (a silent compute service crossing
 * DELTA sooner, see `earlyPoll`). Each cycle is bounded: it is aborted POLL + a few seconds after it
 * started (`pollDeadlineMilliseconds`), which cancels its OpenStack calls and fails it before it
 * decides anything. A failed poll is tried again on POLL's cadence, jittered (`pollRetrySeconds`),
 * never later: a host that dies as Nova recovers is seen as soon as Nova answers. A standby only
 * watches the lease and starts polling at once when it becomes leader (`wake`).
 *
 * Health: `ready` — a leader after its first good poll until 3 consecutive failures; a standby once
 * it has checked the lease. `alive` — false when the loop stalled: a cycle running longer than
 * 3 × POLL, or a sleep overrunning its planned end by 3 × POLL.
 */
export class PollLoop {
  private running = false;
  private loop: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  private sleepTimer: NodeJS.Timeout | null = null;
  private consecutiveFailures = 0;
  private goodPollAsLeader = false;
  private checkedAsStandby = false;
  private busySince: number | null = null;
  private sleepingUntil: number | null = null;
  /** A poll was asked for (pollSoon) since the last cycle started. */
  private pollRequested = false;

  constructor(private readonly options: PollLoopOptions) {}

  /** Consecutive failed polls. */
  get failures(): number {
    return this.consecutiveFailures;
  }

  get ready(): boolean {
    if (!this.running) return false;
    if (this.options.isLeader()) {
      return (
        this.goodPollAsLeader && this.consecutiveFailures < INSTANCE_HA_CONSTANTS.pollFailuresBeforeNotReady
      );
    }
    return this.checkedAsStandby;
  }

  get alive(): boolean {
    if (!this.running) return true;
    const now = Date.now();
    const grace = 3 * this.options.pollSeconds * 1000;
    if (this.busySince !== null && now - this.busySince > grace) return false;
    if (this.sleepingUntil !== null && now - this.sleepingUntil > grace) return false;
    return true;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Ends a sleep early (the lease was just acquired). */
  wake(): void {
    this.wakeUp?.();
  }

  /**
   * Runs the next cycle as soon as possible: ends the current sleep, or, while a cycle runs, skips
   * the sleep after it (a host agent just fell silent: HEARTBEAT_DETECTION).
   */
  pollSoon(): void {
    this.pollRequested = true;
    this.wake();
  }

  /** Stops after the current cycle. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
  }

  private sleep(milliseconds: number): Promise<void> {
    if (this.pollRequested && this.options.isLeader()) milliseconds = 0;
    this.options.onSleep?.(milliseconds);
    this.sleepingUntil = Date.now() + milliseconds;
    return new Promise((resolve) => {
      const done = () => {
        if (this.sleepTimer) clearTimeout(this.sleepTimer);
        this.sleepTimer = null;
        this.wakeUp = null;
        this.sleepingUntil = null;
        resolve();
      };
      this.wakeUp = done;
      this.sleepTimer = setTimeout(done, milliseconds);
    });
  }

  private async run(): Promise<void> {
    const { logger, metrics } = this.options;
    while (this.running) {
      if (!this.options.isLeader()) {
        this.checkedAsStandby = true;
        this.goodPollAsLeader = false;
        await this.sleep(this.options.standbyCheckMilliseconds);
        continue;
      }
      this.busySince = Date.now();
      this.pollRequested = false;
      let wait = this.options.pollSeconds;
      const deadline = new AbortController();
      const deadlineMilliseconds =
        this.options.pollDeadlineMilliseconds ?? pollDeadlineMilliseconds(this.options.pollSeconds);
      const deadlineTimer = setTimeout(
        () => deadline.abort(new PollDeadlineError(deadlineMilliseconds)),
        deadlineMilliseconds,
      );
      try {
        const report = await this.options.runCycle(deadline.signal);
        wait = secondsUntilNextPoll(this.options.pollSeconds, report.earlyPoll);
        this.consecutiveFailures = 0;
        if (!report.leadershipLost) this.goodPollAsLeader = true;
        metrics.pollCycles.inc({ result: 'success' });
        this.options.onCycle?.(report);
      } catch (error) {
        if ((error as Error).name === 'NotLeaderError') {
          this.busySince = null;
          continue;
        }
        this.consecutiveFailures++;
        metrics.pollCycles.inc({ result: 'error' });
        wait = pollRetrySeconds({ pollSeconds: this.options.pollSeconds });
        logger.error(
          { err: error, consecutiveFailures: this.consecutiveFailures, retrySeconds: wait },
          `Poll failed (${this.consecutiveFailures} in a row); next attempt in ${wait.toFixed(1)}s`,
        );
        this.options.onFailure?.({ at: new Date(), consecutiveFailures: this.consecutiveFailures, error });
      } finally {
        clearTimeout(deadlineTimer);
        this.busySince = null;
        metrics.pollConsecutiveFailures.set(this.consecutiveFailures);
      }
      if (this.running) await this.sleep(wait * 1000);
    }
  }
}
