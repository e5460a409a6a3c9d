/**
 * Where the kdump wait of one failed host stands (docs/instance-ha-rules.md#kdump):
 * - `kdump-fenced`: a fence_kdump packet arrived within KDUMP_TIMEOUT: the host is in its crash kernel,
 *   no power fencing;
 * - `start-wait`: seen failed for the first time and no clock yet: the wait clock starts now;
 * - `waiting`: still within KDUMP_TIMEOUT of the clock's start;
 * - `timed-out`: KDUMP_TIMEOUT passed since the clock started without a packet: power fencing.
 */
export type KdumpDecision = 'kdump-fenced' | 'start-wait' | 'waiting' | 'timed-out';

/**
 * What happens to the host's wait clock (one per host, shared by every node-monitor replica and the
 * fencing worker) after a decision: `start` it, `keep` it as it is, or `clear` it.
 */
export type KdumpClockChange = 'start' | 'keep' | 'clear';

/** What the decision reads: the clock, the last packet, the time now and KDUMP_TIMEOUT. */
export interface KdumpWaitObservation {
  /** The last fence_kdump packet from the host (any replica's listener), or null. */
  readonly lastPacketAt: Date | null;
  /** When the wait clock started, or null when it has not. */
  readonly waitStartedAt: Date | null;
  readonly now: Date;
  /** KDUMP_TIMEOUT, in seconds. */
  readonly kdumpTimeoutSeconds: number;
}

/**
 * The kdump wait state machine of docs/instance-ha-rules.md#kdump, the one that both the node
 * monitor (once per poll, before admitting a host) and the fencing worker (blocking, before power
 * fencing) run. A packet counts when it is at most KDUMP_TIMEOUT old; the wait lasts KDUMP_TIMEOUT
 * from the clock's first start, whoever started it.
 */
export function decideKdump(observation: KdumpWaitObservation): KdumpDecision {
  const timeout = observation.kdumpTimeoutSeconds * 1000;
  const now = observation.now.getTime();
  if (observation.lastPacketAt !== null && now - observation.lastPacketAt.getTime() <= timeout) {
    return 'kdump-fenced';
  }
  if (observation.waitStartedAt === null) return 'start-wait';
  return now - observation.waitStartedAt.getTime() < timeout ? 'waiting' : 'timed-out';
}

/**
 * The clock change a decision asks for. A timed-out wait keeps its clock: the decision is handed from
 * the monitor to the fencing worker, which reads the same clock and so finds the wait over instead of
 * starting a second one; the clock is cleared once the host's fence is recorded (see
 * `KdumpWait.settle`) or when a packet settled the question.
 */
export function kdumpClockChange(decision: KdumpDecision): KdumpClockChange {
  switch (decision) {
    case 'start-wait':
      return 'start';
    case 'kdump-fenced':
      return 'clear';
    case 'waiting':
    case 'timed-out':
      return 'keep';
  }
}

/**
 * Milliseconds left before a wait that started at `waitStartedAt` times out (0 when it is over).
 */
export function kdumpWaitRemainingMilliseconds(
  waitStartedAt: Date,
  now: Date,
  kdumpTimeoutSeconds: number,
): number {
  return Math.max(0, waitStartedAt.getTime() + kdumpTimeoutSeconds * 1000 - now.getTime());
}
