/** What gate G10 decides for one failed host (docs/instance-ha-rules.md#kdump). */
export type KdumpDecision =
  /** A packet arrived within KDUMP_TIMEOUT: the host is in its crash kernel; no power fencing. */
  | 'kdump-fenced'
  /** First time seen down: the wait clock starts; not admitted this cycle. */
  | 'start-wait'
  /** Still within KDUMP_TIMEOUT of the wait start: not admitted this cycle. */
  | 'waiting'
  /** Waited KDUMP_TIMEOUT without a packet: normal power fencing. */
  | 'timed-out';

/**
 * Gate G10 for one host: the kdump wait state machine of docs/instance-ha-rules.md#kdump. Because it runs once per
 * poll, the effective wait is rounded up to whole POLL cycles (with POLL 45 > KDUMP_TIMEOUT 30 the host
 * is decided on the next cycle).
 * @param lastPacketAt the last fence_kdump packet from the host (any replica), or null
 * @param waitStartedAt when the wait started, or null when it has not
 */
export function decideKdump(input: {
  lastPacketAt: Date | null;
  waitStartedAt: Date | null;
  now: Date;
  kdumpTimeoutSeconds: number;
}): KdumpDecision {
  const timeout = input.kdumpTimeoutSeconds * 1000;
  if (input.lastPacketAt !== null && input.now.getTime() - input.lastPacketAt.getTime() <= timeout) {
    return 'kdump-fenced';
  }
  if (input.waitStartedAt === null) return 'start-wait';
  return input.now.getTime() - input.waitStartedAt.getTime() < timeout ? 'waiting' : 'timed-out';
}
