import { formatAge, formatDuration, formatTime } from '../format.ts';
import type { SystemStatus } from './system-status.ts';

/** A held-back line: its gate, reason and hosts; `stopped` when the gate stopped the whole poll. */
export interface AdmissionLine {
  readonly gate: string;
  readonly text: string;
  /** True for the gate that stopped the whole poll (every service stale, THRESHOLD, ...). */
  readonly stopped: boolean;
}

/**
 * What the node-monitor leader's last poll held back, in words for `lifeguard status` and the
 * console: its time, each gate that blocked hosts (the one that stopped the poll first) and each host
 * held down after a mass event with when it is released if it stays silent.
 */
export function admissionLines(
  status: Pick<SystemStatus, 'admission' | 'failedPoll'>,
  now: Date,
): { heading: string; lines: AdmissionLine[] } {
  const summary = status.admission;
  const failed = status.failedPoll;
  // A failed poll newer than the last good one is the present: the leader polls and cannot read Nova.
  if (failed !== null && (summary === null || Date.parse(failed.at) > Date.parse(summary.at))) {
    const when = `${formatTime(failed.at)}, ${formatAge(failed.at, now)}`;
    const lastGood = summary ? `; the last good poll was at ${formatTime(summary.at)}` : '';
    return {
      heading: `Last poll (${when}): failed, ${failed.consecutiveFailures} in a row — nothing is fenced until the node monitor can read Nova again${lastGood}`,
      lines: [{ gate: 'poll-failed', stopped: true, text: `poll failed: ${failed.reason}` }],
    };
  }
  if (summary === null) {
    return {
      heading: 'Last poll: none kept (no node-monitor leader has polled in the last three polls)',
      lines: [],
    };
  }
  const lines: AdmissionLine[] = summary.blocked
    .filter((block) => block.gate !== 'mass-event-hold-down')
    .map((block) => ({
      gate: block.gate,
      stopped: block.gate === summary.stoppedBy,
      text: `${block.gate}: ${block.reason}${block.hosts.length > 0 ? ` — ${hostList(block.hosts)}` : ''}`,
    }))
    .sort((a, b) => Number(b.stopped) - Number(a.stopped));
  for (const held of summary.held) {
    const left = Date.parse(held.until) - now.getTime();
    lines.push({
      gate: 'mass-event-hold-down',
      stopped: false,
      text: `held: ${held.host} (went silent in a blocked ${held.gate} event) until ${formatTime(held.until)}${left > 0 ? ` (in ${formatDuration(left)})` : ''}, unless it reports again`,
    });
  }
  const when = `${formatTime(summary.at)}, ${formatAge(summary.at, now)}`;
  return {
    heading:
      lines.length === 0
        ? `Last poll (${when}): nothing held back`
        : `Last poll (${when})${summary.stoppedBy ? `: stopped by ${summary.stoppedBy}, nothing fenced` : ''}`,
    lines,
  };
}

function hostList(hosts: ReadonlyArray<string>): string {
  return hosts.length <= 8
    ? hosts.join(', ')
    : `${hosts.slice(0, 8).join(', ')} and ${hosts.length - 8} more`;
}

/**
 * The fences the fencing worker holds back for want of room, one line each, for `lifeguard status`
 * and the console: nothing is powered off while a failed host's servers have nowhere to go.
 */
export function capacityHoldLines(status: Pick<SystemStatus, 'capacityHolds'>, now: Date): string[] {
  return status.capacityHolds.map(
    ({ host, incidentId, hold }) =>
      `no room: ${host} is not fenced (since ${formatTime(hold.at)}, ${formatAge(hold.at, now)}): ${hold.reason} — lifeguard incident ${incidentId}`,
  );
}
