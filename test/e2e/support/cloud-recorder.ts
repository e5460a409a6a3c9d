import type { CloudSim } from '@lifeguard/cloud-sim';

/** What the recorder keeps of a compute host at one moment. */
export interface HostSnapshot {
  readonly poweredOn: boolean;
  readonly computeRunning: boolean;
  /** Nova's `state`: up while reports arrive within service_down_time and not forced down. */
  readonly up: boolean;
  readonly forcedDown: boolean;
  readonly disabled: boolean;
  readonly disabledReason: string | null;
}

/** What the recorder keeps of a server at one moment. */
export interface ServerSnapshot {
  readonly host: string | null;
  readonly vmState: string;
  readonly taskState: string | null;
}

/**
 * One change seen by the recorder: the subject (host or server id) and its state from `at` on. The
 * change happened after `since` (the previous sample, which still saw the old state) and at or before
 * `at`.
 */
export interface Change<State> {
  /** Milliseconds since the epoch. */
  readonly at: number;
  /** The previous sample's time (milliseconds since the epoch), or `at` for a subject's first record. */
  readonly since: number;
  readonly subject: string;
  readonly state: State;
}

/**
 * Watches a cloud-sim's model (in this process) every `intervalMilliseconds` and keeps every change of
 * a host (power, nova-compute, up/down, forced_down, disabled and its reason) and of a server (host,
 * vm_state, task_state) with the time it was first seen — the cloud's side of a timeline, to put
 * next to the events lifeguard published. Times are at most one interval late.
 */
export class CloudRecorder {
  readonly hostChanges: Array<Change<HostSnapshot>> = [];
  readonly serverChanges: Array<Change<ServerSnapshot>> = [];
  private readonly lastHost = new Map<string, string>();
  private readonly lastServer = new Map<string, string>();
  private readonly timer: NodeJS.Timeout;
  private lastSampleAt = Date.now();

  constructor(
    private readonly sim: CloudSim,
    intervalMilliseconds = 10,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMilliseconds);
  }

  /** Takes a sample now (call it before reading, so the latest change is in). */
  sample(): void {
    const now = Date.now();
    const since = this.lastSampleAt;
    this.lastSampleAt = now;
    const { model } = this.sim;
    for (const host of model.hosts.values()) {
      const state: HostSnapshot = {
        poweredOn: host.poweredOn,
        computeRunning: host.computeRunning,
        up: model.serviceIsUp(host, now),
        forcedDown: host.forcedDown,
        disabled: host.disabled,
        disabledReason: host.disabledReason,
      };
      CloudRecorder.record(this.hostChanges, this.lastHost, host.name, state, now, since);
    }
    for (const server of model.servers.all()) {
      const state: ServerSnapshot = {
        host: server.host,
        vmState: server.vmState,
        taskState: server.taskState,
      };
      CloudRecorder.record(this.serverChanges, this.lastServer, server.id, state, now, since);
    }
  }

  /**
   * Appends `state` of `subject` to `changes` when it differs from the last one kept in `last` (a
   * subject's first state counts as a change at `now`); `since` is the previous sample's time.
   */
  private static record<State>(
    changes: Array<Change<State>>,
    last: Map<string, string>,
    subject: string,
    state: State,
    now: number,
    since: number,
  ): void {
    const key = JSON.stringify(state);
    const previous = last.get(subject);
    if (previous === key) return;
    last.set(subject, key);
    changes.push({ at: now, since: previous === undefined ? now : since, subject, state });
  }

  /** The first time (at or after `since`) the host was seen in a state matching `predicate`, or null. */
  hostFirst(host: string, predicate: (state: HostSnapshot) => boolean, since = 0): number | null {
    return (
      this.hostChanges.find(
        (change) => change.subject === host && change.at >= since && predicate(change.state),
      )?.at ?? null
    );
  }

  /** Every state the host went through, oldest first. */
  hostHistory(host: string): Array<Change<HostSnapshot>> {
    return this.hostChanges.filter((change) => change.subject === host);
  }

  /**
   * When the server was first seen ACTIVE (no task) on a host other than `source` — `at`, and `since`,
   * the last sample that saw it otherwise — or null.
   */
  activeElsewhere(serverId: string, source: string): Change<ServerSnapshot> | null {
    return (
      this.serverChanges.find(
        (change) =>
          change.subject === serverId &&
          change.state.vmState === 'active' &&
          change.state.taskState === null &&
          change.state.host !== null &&
          change.state.host !== source,
      ) ?? null
    );
  }

  /** When the server was first seen ACTIVE (no task) on a host other than `source`, or null. */
  activeElsewhereAt(serverId: string, source: string): number | null {
    return this.activeElsewhere(serverId, source)?.at ?? null;
  }

  /** The first time the server was seen rebuilding (its evacuation accepted), or null. */
  rebuildingAt(serverId: string): number | null {
    return (
      this.serverChanges.find((change) => change.subject === serverId && change.state.taskState !== null)
        ?.at ?? null
    );
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
