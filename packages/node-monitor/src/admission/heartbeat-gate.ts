import { INSTANCE_HA_CONSTANTS, sendsHeartbeats } from '@lifeguard/instance-ha';

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
  /** Everything passes during the grace period after the listener started. */
  readonly grace: boolean;
  /** A cliff held back every candidate this cycle (suspected observer partition). */
  readonly cliff: boolean;
  /** The cliff lasted HEARTBEAT_CLIFF_MAX_CYCLES cycles and is now accepted as a genuine loss. */
  readonly cliffExpired: boolean;
  readonly currentActive: number;
  readonly previousActive: number;
}

/**
 * Gates G2/G3 (docs/instance-ha-rules.md#g2-and-g3-heartbeats): the heartbeat channel as a second failure signal.
 * - Grace: until the listener has run HEARTBEAT_TIMEOUT seconds everything passes.
 * - Cliff: current = hosts (not in flight) with a heartbeat within HEARTBEAT_TIMEOUT; previous =
 *   max(1, last cycle's count − in-flight count). When previous ≥ 3 and the drop is at least
 *   HEARTBEAT_CLIFF_THRESHOLD percent, a consecutive-cliff counter increases and every candidate is
 *   held back (baseline kept) until the counter reaches HEARTBEAT_CLIFF_MAX_CYCLES; then the loss is
 *   accepted (counter and baseline reset). Otherwise current becomes the baseline and the counter
 *   resets. lifeguard evaluates the cliff every cycle (so the baseline stays current), InstanceHA only
 *   in cycles with candidates.
 * - Per host: a candidate with a heartbeat within HEARTBEAT_TIMEOUT is not fenced.
 * The state (baseline, counter) lives in the leading monitor; a new leader starts a fresh baseline.
 */
export class HeartbeatGate {
  private baseline: number | null = null;
  private consecutiveCliffs = 0;

  constructor(private readonly settings: HeartbeatGateSettings) {}

  evaluate<Item>(input: HeartbeatGateInput<Item>): HeartbeatGateResult<Item> {
    const timeout = this.settings.timeoutSeconds * 1000;
    const recent = (host: string) =>
      sendsHeartbeats(input.lastHeartbeats.get(host), input.now, this.settings.timeoutSeconds);
    const grace =
      input.listeningSince === null || input.now.getTime() - input.listeningSince.getTime() < timeout;
    let currentActive = 0;
    for (const host of input.lastHeartbeats.keys())
      if (!input.inFlight.has(host) && recent(host)) currentActive++;
    const previousActive = Math.max(1, (this.baseline ?? currentActive) - input.inFlight.size);
    const all = input.candidates.map((candidate) => candidate.item);
    if (grace) {
      this.baseline = currentActive;
      this.consecutiveCliffs = 0;
      return {
        passed: all,
        alive: [],
        grace,
        cliff: false,
        cliffExpired: false,
        currentActive,
        previousActive,
      };
    }
    let cliff = false;
    let cliffExpired = false;
    const dropPercent = ((previousActive - currentActive) / previousActive) * 100;
    if (
      this.baseline !== null &&
      previousActive >= INSTANCE_HA_CONSTANTS.heartbeatCliffMinimumHosts &&
      dropPercent >= this.settings.cliffThresholdPercent
    ) {
      this.consecutiveCliffs++;
      if (this.consecutiveCliffs < this.settings.cliffMaxCycles) cliff = true;
      else {
        cliffExpired = true;
        this.consecutiveCliffs = 0;
        this.baseline = currentActive;
      }
    } else {
      this.baseline = currentActive;
      this.consecutiveCliffs = 0;
    }
    if (cliff) return { passed: [], alive: [], grace, cliff, cliffExpired, currentActive, previousActive };
    const passed: Item[] = [];
    const alive: Item[] = [];
    for (const candidate of input.candidates)
      (recent(candidate.shortHost) ? alive : passed).push(candidate.item);
    return { passed, alive, grace, cliff, cliffExpired, currentActive, previousActive };
  }

  /** The consecutive cliff cycles so far. */
  get cliffCycles(): number {
    return this.consecutiveCliffs;
  }
}
