import { INSTANCE_HA_CONSTANTS } from '../../config/derived.ts';
import { sendsHeartbeats } from '../heartbeat-rule.ts';

export interface HeartbeatGateSettings {
  /** HEARTBEAT_TIMEOUT, seconds. */
  readonly timeoutSeconds: number;
  /** HEARTBEAT_CLIFF_THRESHOLD, percent. */
  readonly cliffThresholdPercent: number;
  /** HEARTBEAT_CLIFF_MAX_CYCLES. */
  readonly cliffMaxCycles: number;
}

export interface HeartbeatGateInput<Item> {
  /** Candidates (fresh failures) with their short hostnames. */
  readonly candidates: ReadonlyArray<{ item: Item; shortHost: string }>;
  /** Hosts already being handled (short names): excluded from the active count. */
  readonly inFlight: ReadonlySet<string>;
  /** Last heartbeat per short hostname. */
  readonly lastHeartbeats: ReadonlyMap<string, Date>;
  /** When the heartbeat listener started (null: not running). */
  readonly listeningSince: Date | null;
  readonly now: Date;
}

export interface HeartbeatGateResult<Item> {
  /** Candidates that go on (no recent heartbeat). */
  readonly passed: ReadonlyArray<Item>;
  /** Candidates whose OS still sends heartbeats: only nova-compute died; not fenced. */
  readonly alive: ReadonlyArray<Item>;
  /** The grace period after the listener started: no cliff, and silence is not held against a host. */
  readonly grace: boolean;
  /** A cliff held back every candidate this cycle (suspected observer partition). */
  readonly cliff: boolean;
  /** The cliff lasted HEARTBEAT_CLIFF_MAX_CYCLES cycles and is now accepted as a genuine loss. */
  readonly cliffExpired: boolean;
  readonly currentActive: number;
  readonly previousActive: number;
}

/**
 * What the cliff remembers from one cycle to the next, held by the leading monitor and handed to
 * each cycle's gates (a new leader starts from INITIAL_HEARTBEAT_CLIFF).
 */
export interface HeartbeatCliffState {
  /** Last cycle's count of hosts sending heartbeats, or null before the first cycle. */
  readonly baseline: number | null;
  /** Consecutive cycles a cliff held every candidate back. */
  readonly consecutiveCliffs: number;
}

export const INITIAL_HEARTBEAT_CLIFF: HeartbeatCliffState = { baseline: null, consecutiveCliffs: 0 };

/** The gate's result with the cliff state the next cycle starts from. */
export interface HeartbeatJudgement<Item> extends HeartbeatGateResult<Item> {
  readonly next: HeartbeatCliffState;
}

/**
 * Gates G2/G3 (docs/instance-ha-rules.md#g2-and-g3-heartbeats): the heartbeat channel as a second
 * failure signal, a pure function of the cycle's heartbeats and the cliff state before it.
 * - Grace: until the listener has run HEARTBEAT_TIMEOUT seconds, no cliff is judged and a candidate
 *   without a recent heartbeat passes (the listener may not have heard it yet); one with a heartbeat
 *   within HEARTBEAT_TIMEOUT (recorded by any replica, before this one started too) is alive.
 * - Cliff: current = hosts (not in flight) with a heartbeat within HEARTBEAT_TIMEOUT; previous =
 *   max(1, last cycle's count − in-flight count). When previous ≥ 3 and the drop is at least
 *   HEARTBEAT_CLIFF_THRESHOLD percent, the consecutive-cliff count increases and every candidate is
 *   held back (baseline kept) until the count reaches HEARTBEAT_CLIFF_MAX_CYCLES; then the loss is
 *   accepted (count and baseline reset). Otherwise current becomes the baseline and the count
 *   resets. lifeguard judges the cliff every cycle (so the baseline stays current), InstanceHA only
 *   in cycles with candidates.
 * - Per host: a candidate with a heartbeat within HEARTBEAT_TIMEOUT is not fenced (sendsHeartbeats,
 *   the rule every action's heartbeat re-check applies).
 */
export function judgeHeartbeats<Item>(
  input: HeartbeatGateInput<Item>,
  settings: HeartbeatGateSettings,
  state: HeartbeatCliffState,
): HeartbeatJudgement<Item> {
  const timeout = settings.timeoutSeconds * 1000;
  const recent = (host: string) =>
    sendsHeartbeats(input.lastHeartbeats.get(host), input.now, settings.timeoutSeconds);
  const grace =
    input.listeningSince === null || input.now.getTime() - input.listeningSince.getTime() < timeout;
  let currentActive = 0;
  for (const host of input.lastHeartbeats.keys())
    if (!input.inFlight.has(host) && recent(host)) currentActive++;
  const previousActive = Math.max(1, (state.baseline ?? currentActive) - input.inFlight.size);
  const all = input.candidates.map((candidate) => candidate.item);
  const counts = { currentActive, previousActive };
  const reset: HeartbeatCliffState = { baseline: currentActive, consecutiveCliffs: 0 };
  if (grace) {
    // Silence proves nothing yet; a heartbeat any replica recorded within HEARTBEAT_TIMEOUT still does.
    const alive = input.candidates
      .filter((candidate) => recent(candidate.shortHost))
      .map((each) => each.item);
    const passed = all.filter((item) => !alive.includes(item));
    return { passed, alive, grace, cliff: false, cliffExpired: false, ...counts, next: reset };
  }
  const dropPercent = ((previousActive - currentActive) / previousActive) * 100;
  const dropped =
    state.baseline !== null &&
    previousActive >= INSTANCE_HA_CONSTANTS.heartbeatCliffMinimumHosts &&
    dropPercent >= settings.cliffThresholdPercent;
  if (dropped && state.consecutiveCliffs + 1 < settings.cliffMaxCycles) {
    const next = { baseline: state.baseline, consecutiveCliffs: state.consecutiveCliffs + 1 };
    return { passed: [], alive: [], grace, cliff: true, cliffExpired: false, ...counts, next };
  }
  const passed: Item[] = [];
  const alive: Item[] = [];
  for (const candidate of input.candidates)
    (recent(candidate.shortHost) ? alive : passed).push(candidate.item);
  return { passed, alive, grace, cliff: false, cliffExpired: dropped, ...counts, next: reset };
}
