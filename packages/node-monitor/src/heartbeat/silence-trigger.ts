import type { HostAgentEvidence } from '@lifeguard/instance-ha';
import type { Logger } from '@lifeguard/runtime';

/** How often the leading monitor looks for agents that just fell silent (HEARTBEAT_DETECTION). */
export const SILENCE_CHECK_MILLISECONDS = 250;

/**
 * The hosts whose agent has just been silent on every network for `downAfterSeconds` (silence counted
 * from the later of the last heartbeat and `listeningSince`), heard within `recentSeconds`, and not
 * already reported for the same last heartbeat (`reported`: host → the last heartbeat it was reported
 * for, updated in place). A pure function of the evidence and the clock.
 */
export function newlySilentHosts(
  evidence: HostAgentEvidence,
  reported: Map<string, number>,
  moment: { now: Date; listeningSince: Date | null; downAfterSeconds: number; recentSeconds: number },
): string[] {
  const latest = new Map<string, number>();
  for (const times of evidence.networks.values())
    for (const [host, at] of times) latest.set(host, Math.max(latest.get(host) ?? 0, at.getTime()));
  const now = moment.now.getTime();
  const hosts: string[] = [];
  for (const [host, last] of latest) {
    if (now - last > moment.recentSeconds * 1000 || reported.get(host) === last) continue;
    const silentFrom = Math.max(last, moment.listeningSince?.getTime() ?? 0);
    if (now - silentFrom < moment.downAfterSeconds * 1000) continue;
    reported.set(host, last);
    hosts.push(host);
  }
  for (const host of reported.keys()) if (!latest.has(host)) reported.delete(host);
  return hosts.sort();
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
 * HEARTBEAT_DETECTION's clock: every SILENCE_CHECK_MILLISECONDS the leading monitor reads the agents'
 * last heartbeats and, the moment a host's agent has been silent on every network for
 * HEARTBEAT_DOWN_AFTER, polls at once (the poll judges the host with Nova's fresh listing and every
 * admission gate); so the decision comes within a check interval and one poll of the deadline, not
 * at the next POLL.
 */
export class SilenceTrigger {
  private readonly reported = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private checking = false;

  constructor(private readonly options: SilenceTriggerOptions) {}

  /** One look: @returns the hosts that triggered a poll */
  async check(): Promise<string[]> {
    const { options } = this;
    if (!options.isLeader()) {
      this.reported.clear();
      return [];
    }
    const hosts = newlySilentHosts(await options.read(), this.reported, {
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
    return hosts;
  }

  start(): void {
    this.timer ??= setInterval(() => {
      if (this.checking) return;
      this.checking = true;
      this.check()
        .catch((error: unknown) =>
          this.options.logger.warn({ err: error }, 'host agent silence check failed'),
        )
        .finally(() => {
          this.checking = false;
        });
    }, SILENCE_CHECK_MILLISECONDS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
