import type { KdumpStore } from './kdump-store.ts';
import {
  decideKdump,
  type KdumpDecision,
  kdumpClockChange,
  kdumpWaitRemainingMilliseconds,
} from './kdump-wait-state.ts';

/** One look at a host's kdump wait: the decision and the clock it was decided on. */
export interface KdumpStep {
  readonly decision: KdumpDecision;
  /** The wait clock's start after the step (null when none runs: a packet settled it). */
  readonly waitStartedAt: Date | null;
}

/** A blocking wait's outcome: `kdump-fenced` (packet seen) or `timed-out` (power fencing). */
export interface KdumpWaitOutcome {
  readonly decision: 'kdump-fenced' | 'timed-out';
  /** When the wait started (null when a packet had already arrived before any clock ran). */
  readonly waitStartedAt: Date | null;
  /** How many times the wait slept for a packet (0: decided at its first look). */
  readonly sleeps: number;
}

/**
 * The kdump wait of docs/instance-ha-rules.md#kdump on the shared Redis clock of KdumpStore: the
 * executor of the pure state machine `decideKdump` (kdump-wait-state.ts) for the node monitor, which
 * takes one `step` per poll, and the fencing worker, which blocks in `untilDecided` before power
 * fencing. Both continue the same clock, so a host waits KDUMP_TIMEOUT once from the first look,
 * however the decision is handed on (monitor → fence job, a retried or taken-over job).
 */
export class KdumpWait {
  constructor(
    private readonly store: KdumpStore,
    /** KDUMP_TIMEOUT, in seconds. */
    private readonly kdumpTimeoutSeconds: number,
  ) {}

  /**
   * Reads the host's last packet and clock, decides, and applies the clock change the decision asks
   * for. When another replica started the clock first, the decision is taken again on its start. A
   * clock from before `lastReportAt` (an earlier failure's) is started afresh.
   * @param lastReportAt the host's last report to Nova before this failure, when known (see
   *   KdumpWaitObservation.lastReportAt)
   * @throws the Redis error of a failed read or write
   */
  async step(host: string, now: Date = new Date(), lastReportAt: Date | null = null): Promise<KdumpStep> {
    const [lastPacketAt, waitStartedAt] = await Promise.all([
      this.store.lastPacketAt(host),
      this.store.waitStartedAt(host),
    ]);
    const observation = { lastPacketAt, now, kdumpTimeoutSeconds: this.kdumpTimeoutSeconds, lastReportAt };
    const decision = decideKdump({ ...observation, waitStartedAt });
    switch (kdumpClockChange(decision)) {
      case 'start': {
        const started =
          waitStartedAt === null
            ? await this.store.startWait(host, now)
            : await this.store.restartWait(host, waitStartedAt, now);
        return { decision: decideKdump({ ...observation, waitStartedAt: started }), waitStartedAt: started };
      }
      case 'clear':
        await this.store.clearWait(host);
        return { decision, waitStartedAt: null };
      case 'keep':
        return { decision, waitStartedAt };
    }
  }

  /**
   * Looks every `pollMilliseconds` (never past the wait's end) until a packet arrives or KDUMP_TIMEOUT
   * has passed since the clock first started.
   * @param onWaiting called once, at the first look that has to wait, with the clock's start
   * @param lastReportAt the host's last report to Nova before this failure, when known: a packet or a
   *   clock from before it belongs to an earlier failure and counts for nothing
   * @throws the Redis error of a failed look
   */
  async untilDecided(
    host: string,
    pollMilliseconds: number,
    onWaiting: (waitStartedAt: Date) => void = () => {},
    lastReportAt: Date | null = null,
  ): Promise<KdumpWaitOutcome> {
    let sleeps = 0;
    for (;;) {
      const now = new Date();
      const { decision, waitStartedAt } = await this.step(host, now, lastReportAt);
      if (decision === 'kdump-fenced' || decision === 'timed-out') return { decision, waitStartedAt, sleeps };
      const started = waitStartedAt ?? now;
      if (sleeps === 0) onWaiting(started);
      const remaining = kdumpWaitRemainingMilliseconds(started, now, this.kdumpTimeoutSeconds);
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.min(pollMilliseconds, remaining))));
      sleeps++;
    }
  }

  /** Clears the host's wait clock once its fence is recorded or it came back: the question is settled. */
  async settle(host: string): Promise<void> {
    await this.store.clearWait(host);
  }
}
