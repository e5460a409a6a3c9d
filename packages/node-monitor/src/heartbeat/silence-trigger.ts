import { type HostAgentEvidence, lastHeartbeatPerHost } from '@lifeguard/instance-ha';
import type { Logger } from '@lifeguard/runtime';

/** How often the leading monitor looks for agents that just fell silent (HEARTBEAT_DETECTION). */
export const SILENCE_CHECK_MILLISECONDS = 250;

/** When the silence rule looks: now, since when it listens, HEARTBEAT_DOWN_AFTER, HEARTBEAT_TIMEOUT. */
interface SilenceMoment {
  readonly now: Date;
  readonly listeningSince: Date | null;
  readonly downAfterSeconds: number;
  readonly recentSeconds: number;
}

/**
 * Each host heard within `recentSeconds` whose silence is not reported yet, with its last heartbeat
 * and the milliseconds until it has been silent on every network for `downAfterSeconds` (silence
 * counted from the later of the last heartbeat and `listeningSince`; 0 or less: it has).
 */
function pendingSilences(
  latest: ReadonlyMap<string, number>,
  reported: ReadonlyMap<string, number>,
  moment: SilenceMoment,
): Array<{ host: string; last: number; due: number }> {
  const now = moment.now.getTime();
  const pending: Array<{ host: string; last: number; due: number }> = [];
  for (const [host, last] of latest) {
    if (now - last > moment.recentSeconds * 1000 || reported.get(host) === last) continue;
    const silentFrom = Math.max(last, moment.listeningSince?.getTime() ?? 0);
    pending.push({ host, last, due: silentFrom + moment.downAfterSeconds * 1000 - now });
  }
  return pending;
}

/**
 * Reports the hosts whose silence fell due (in `reported`: host → the last heartbeat it was reported
 * for, updated in place, hosts no longer heard of dropped); @returns them, sorted, and the
 * milliseconds until the next pending silence falls due, or null.
 */
function judgeSilences(
  latest: ReadonlyMap<string, number>,
  reported: Map<string, number>,
  moment: SilenceMoment,
): { hosts: string[]; nextSilence: number | null } {
  const hosts: string[] = [];
  let nextSilence: number | null = null;
  for (const { host, last, due } of pendingSilences(latest, reported, moment)) {
    if (due > 0) {
      nextSilence = nextSilence === null ? due : Math.min(nextSilence, due);
      continue;
    }
    reported.set(host, last);
    hosts.push(host);
  }
  for (const host of reported.keys()) if (!latest.has(host)) reported.delete(host);
  return { hosts: hosts.sort(), nextSilence };
}

/**
 * The hosts whose agent has just been silent on every network for `downAfterSeconds` (silence counted
 * from the later of the last heartbeat and `listeningSince`), heard within `recentSeconds`, and not
 * already reported for the same last heartbeat (`reported`: host → the last heartbeat it was reported
 * for, updated in place). A pure function of the evidence and the clock.
 */
export function newlySilentHosts(
  evidence: HostAgentEvidence,
  reported: Map<string, number>,
  moment: SilenceMoment,
): string[] {
  return judgeSilences(lastHeartbeatPerHost(evidence), reported, moment).hosts;
}

/**
 * Milliseconds from `moment.now` until the next host's agent would have been silent on every network
 * for `downAfterSeconds` (0 when one already is), or null when no host is heard within `recentSeconds`
 * or every silence is already reported. A heartbeat arriving meanwhile only moves that moment later, so
 * a look at it never comes late. A pure function of the evidence and the clock.
 */
export function millisecondsToNextSilence(
  evidence: HostAgentEvidence,
  reported: ReadonlyMap<string, number>,
  moment: SilenceMoment,
): number | null {
  let soonest: number | null = null;
  for (const { due } of pendingSilences(lastHeartbeatPerHost(evidence), reported, moment))
    soonest = Math.min(soonest ?? Number.POSITIVE_INFINITY, Math.max(0, due));
  return soonest;
}

export interface SilenceTriggerOptions {
  readonly read: () => Promise<HostAgentEvidence>;
  readonly listeningSince: () => Date | null;
  readonly isLeader: () => boolean;
  /** Brings the next poll forward (PollLoop.pollSoon). */
  readonly pollSoon: () => void;
  readonly downAfterSeconds: number;
  /** HEARTBEAT_TIMEOUT: agents silent longer than this are not looked at again. */
  readonly recentSeconds: number;
  readonly logger: Logger;
  readonly now?: () => Date;
}

/**
 * HEARTBEAT_DETECTION's clock: the leading monitor reads the agents' last heartbeats every
 * SILENCE_CHECK_MILLISECONDS, and also at the very moment the next agent's silence would reach
 * HEARTBEAT_DOWN_AFTER (millisecondsToNextSilence); the moment a host's agent has been silent on every
 * network that long, it polls at once (the poll judges the host with Nova's fresh listing and every
 * admission gate). So the decision comes one poll after the deadline, not at the next POLL or check.
 */
export class SilenceTrigger {
  private readonly reported = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private running = false;

  constructor(private readonly options: SilenceTriggerOptions) {}

  /** One look: @returns the hosts that triggered a poll */
  async check(): Promise<string[]> {
    return (await this.look()).hosts;
  }

  /** One look: the hosts that triggered a poll, and when the next silence is due (milliseconds, or null). */
  private async look(): Promise<{ hosts: string[]; nextSilence: number | null }> {
    const { options } = this;
    if (!options.isLeader()) {
      this.reported.clear();
      return { hosts: [], nextSilence: null };
    }
    const evidence = await options.read();
    const { hosts, nextSilence } = judgeSilences(lastHeartbeatPerHost(evidence), this.reported, {
      now: options.now?.() ?? new Date(),
      listeningSince: options.listeningSince(),
      downAfterSeconds: options.downAfterSeconds,
      recentSeconds: options.recentSeconds,
    });
    if (hosts.length > 0) {
      options.logger.info(
        { hosts },
        `host agents silent on every network: polling now (${hosts.join(', ')})`,
      );
      options.pollSoon();
    }
    return { hosts, nextSilence };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(SILENCE_CHECK_MILLISECONDS);
  }

  private schedule(milliseconds: number): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.look()
        .then(({ nextSilence }) =>
          this.schedule(Math.min(SILENCE_CHECK_MILLISECONDS, (nextSilence ?? Number.POSITIVE_INFINITY) + 1)),
        )
        .catch((error: unknown) => {
          this.options.logger.warn({ err: error }, 'host agent silence check failed');
          this.schedule(SILENCE_CHECK_MILLISECONDS);
        });
    }, milliseconds);
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
