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
  /**
   * The host's last report to Nova before this failure (its `updated_at` while nobody forced it
   * down), or null/absent when not known. A clock started, or a packet sent, at or before it belongs
   * to an earlier failure that the host came back from: it is ignored.
   */
  readonly lastReportAt?: Date | null;
}

/** True when `time` is at or before the host's last report: it belongs to an earlier failure. */
function beforeThisFailure(time: Date, lastReportAt: Date | null | undefined): boolean {
  return lastReportAt != null && time.getTime() <= lastReportAt.getTime();
}

/**
 * The wait clock that counts for the current failure: null when none runs, or when the one in Redis
 * started at or before the host's last report (a wait of an earlier failure the host came back from,
 * never settled because no fence followed it).
 */
export function currentWaitStart(observation: KdumpWaitObservation): Date | null {
  const started = observation.waitStartedAt;
  return started === null || beforeThisFailure(started, observation.lastReportAt) ? null : started;
}

/**
 * The kdump wait state machine of docs/instance-ha-rules.md#kdump, the one that both the node
 * monitor (once per poll, before admitting a host) and the fencing worker (blocking, before power
 * fencing) run. A packet counts when it is at most KDUMP_TIMEOUT old; the wait lasts KDUMP_TIMEOUT
 * from the clock's first start, whoever started it. The clock and the packets belong to one failure:
 * those from before the host's last report (`lastReportAt`) are ignored, so a host that came back
 * during a wait and fails again waits a full KDUMP_TIMEOUT again.
 */
export function decideKdump(observation: KdumpWaitObservation): KdumpDecision {
  const timeout = observation.kdumpTimeoutSeconds * 1000;
  const now = observation.now.getTime();
  const packet = observation.lastPacketAt;
  if (
    packet !== null &&
    now - packet.getTime() <= timeout &&
    !beforeThisFailure(packet, observation.lastReportAt)
  ) {
    return 'kdump-fenced';
  }
  const started = currentWaitStart(observation);
  if (started === null) return 'start-wait';
  return now - started.getTime() < timeout ? 'waiting' : 'timed-out';
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

/** What the monitor knows of a host with a wait clock: its compute service now, and its open incident. */
export interface KdumpClockHost {
  /** True while the host reports to Nova by its own reports (see judgeHostReports). */
  readonly reporting: boolean;
  /** True when lifeguard (or someone) forced its compute service down. */
  readonly forcedDown: boolean;
  /** True when lifeguard has an open incident for the host (its fence job owns the clock then). */
  readonly incidentOpen: boolean;
}

/**
 * The hosts whose wait clock is settled because they report to Nova again (docs/instance-ha-rules.md#kdump):
 * a host that came back during its kdump wait, with no incident (no fence job owns the clock) and not
 * forced down. Its next failure then starts a clock of its own.
 * @param clocks the hosts with a wait clock (short hostnames) and what is known of each now; a host
 *   Nova does not list is left as it is
 */
export function kdumpClocksToSettle(clocks: ReadonlyMap<string, KdumpClockHost | null>): string[] {
  const settled: string[] = [];
  for (const [host, known] of clocks) {
    if (known?.reporting && !known.forcedDown && !known.incidentOpen) settled.push(host);
  }
  return settled;
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
